//! What the store knows: the world size, each rank's state, and the
//! key-value pairs ranks publish (their segment info). Pure bookkeeping,
//! behind the server's lock.

use super::protocol::{Answer, RankState};
use super::rank_page::RankPage;
use crate::types::{SMEM_INVALID_PARAM, SMEM_NO_RESOURCES, SMEM_RES_IN_USE, SMEM_WORLD_SIZE_MAX};
use std::collections::BTreeMap;

/// The store's tables.
#[derive(Debug, Default)]
pub(super) struct StoreState {
    world_size: Option<u32>,
    ranks: BTreeMap<u32, RankState>,
    values: BTreeMap<String, String>,
    /// The process that started the store inside `smem_bm_init`: with
    /// auto-ranking it gets rank 0.
    owner_pid: Option<u32>,
    /// The ranks' states, shared with them (none when it could not be
    /// made: the ranks then ask with `RANK`).
    page: Option<RankPage>,
}

impl StoreState {
    /// A store started by process `owner_pid` (`None`: standalone).
    pub(super) fn new(owner_pid: Option<u32>) -> Self {
        let page = RankPage::create()
            .inspect_err(|error| log::warn!("config store: no page of rank states ({error}); ranks will ask"))
            .ok();
        Self {
            owner_pid,
            page,
            ..Self::default()
        }
    }

    /// Handles one request of the connection whose rank is `*rank`.
    pub(super) fn handle(&mut self, line: &str, rank: &mut Option<u32>) -> Answer {
        let (verb, rest) = line.split_once(' ').unwrap_or((line, ""));
        match verb {
            "HELLO" => self.hello(rest, rank),
            "PUT" => match rest.split_once(' ') {
                Some((key, value)) if !key.is_empty() => {
                    self.values.insert(key.to_string(), value.to_string());
                    Answer::Ok(String::new())
                }
                _ => Answer::Err(SMEM_INVALID_PARAM, "PUT needs a key and a value".into()),
            },
            "GET" => match self.values.get(rest) {
                Some(value) => Answer::Ok(value.clone()),
                None => Answer::None,
            },
            "RANK" => match rest.parse::<u32>() {
                Ok(which) => Answer::Ok(self.state(which).word().to_string()),
                Err(_) => Answer::Err(SMEM_INVALID_PARAM, format!("RANK {rest:?}: not a rank")),
            },
            "PAGE" => match &self.page {
                Some(page) => Answer::Ok(format!("{} {}", std::process::id(), page.raw_fd())),
                None => Answer::None,
            },
            "LEAVE" => {
                if let Some(left) = rank.take() {
                    self.set(left, RankState::Left);
                    log::debug!("config store: rank {left} left");
                }
                Answer::Ok(String::new())
            }
            _ => Answer::Err(SMEM_INVALID_PARAM, format!("unknown request {verb:?}")),
        }
    }

    /// Records `state` for `rank`, in the table and the shared page.
    fn set(&mut self, rank: u32, state: RankState) {
        self.ranks.insert(rank, state);
        if let Some(page) = &self.page {
            page.set(rank, state);
        }
    }

    fn state(&self, rank: u32) -> RankState {
        self.ranks.get(&rank).copied().unwrap_or(RankState::Absent)
    }

    fn hello(&mut self, rest: &str, rank: &mut Option<u32>) -> Answer {
        let words: Vec<&str> = rest.split(' ').collect();
        let [pid, world, wanted] = words[..] else {
            return Answer::Err(SMEM_INVALID_PARAM, "HELLO needs a pid, a world size and a rank".into());
        };
        let (Ok(pid), Ok(world)) = (pid.parse::<u32>(), world.parse::<u32>()) else {
            return Answer::Err(SMEM_INVALID_PARAM, "HELLO: pid and world size are numbers".into());
        };
        if rank.is_some() {
            return Answer::Err(SMEM_INVALID_PARAM, "this connection has joined already".into());
        }
        if world == 0 || world > SMEM_WORLD_SIZE_MAX {
            return Answer::Err(SMEM_INVALID_PARAM, format!("world size {world} is not in 1..=1024"));
        }
        match self.world_size {
            Some(known) if known != world => {
                return Answer::Err(
                    SMEM_INVALID_PARAM,
                    format!("world size {world} differs from the store's {known}"),
                );
            }
            _ => self.world_size = Some(world),
        }
        let chosen = if wanted == "auto" {
            let taken = |candidate: &u32| self.state(*candidate) == RankState::Alive;
            let reserved = |candidate: &u32| {
                *candidate == 0
                    && self.owner_pid.is_some_and(|owner| owner != pid)
                    && self.state(0) == RankState::Absent
            };
            if self.owner_pid == Some(pid) && !taken(&0) {
                Some(0)
            } else {
                (0..world).find(|candidate| !taken(candidate) && !reserved(candidate))
            }
        } else {
            match wanted.parse::<u32>() {
                Ok(given) if given < world => {
                    if self.state(given) == RankState::Alive {
                        return Answer::Err(SMEM_RES_IN_USE, format!("rank {given} is taken by a live process"));
                    }
                    Some(given)
                }
                _ => return Answer::Err(SMEM_INVALID_PARAM, format!("rank {wanted:?} is not in 0..{world}")),
            }
        };
        let Some(chosen) = chosen else {
            return Answer::Err(SMEM_NO_RESOURCES, format!("all {world} ranks are taken"));
        };
        self.set(chosen, RankState::Alive);
        *rank = Some(chosen);
        log::debug!("config store: pid {pid} joined as rank {chosen} of {world}");
        Answer::Ok(chosen.to_string())
    }

    /// The connection of `rank` closed without `LEAVE`.
    pub(super) fn died(&mut self, rank: u32) {
        self.set(rank, RankState::Dead);
        log::info!("config store: rank {rank} died (its connection closed without leaving)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_are_given_in_join_order_with_zero_for_the_owner() {
        let mut state = StoreState::new(Some(7));
        let (mut a, mut b, mut owner) = (None, None, None);
        assert_eq!(state.handle("HELLO 1 3 auto", &mut a), Answer::Ok("1".into()));
        assert_eq!(state.handle("HELLO 7 3 auto", &mut owner), Answer::Ok("0".into()));
        assert_eq!(state.handle("HELLO 2 3 auto", &mut b), Answer::Ok("2".into()));
        let mut c = None;
        assert!(matches!(
            state.handle("HELLO 3 3 auto", &mut c),
            Answer::Err(SMEM_NO_RESOURCES, _)
        ));
        assert!(matches!(
            state.handle("HELLO 3 4 auto", &mut c),
            Answer::Err(SMEM_INVALID_PARAM, _)
        ));
        assert!(matches!(
            state.handle("HELLO 3 3 1", &mut c),
            Answer::Err(SMEM_RES_IN_USE, _)
        ));
        state.died(1);
        assert_eq!(state.handle("RANK 1", &mut c), Answer::Ok("dead".into()));
        assert_eq!(state.handle("LEAVE", &mut b), Answer::Ok(String::new()));
        assert_eq!(state.handle("RANK 2", &mut c), Answer::Ok("left".into()));
        assert_eq!(state.handle("GET k", &mut c), Answer::None);
        assert_eq!(state.handle("PUT k a b", &mut c), Answer::Ok(String::new()));
        assert_eq!(state.handle("GET k", &mut c), Answer::Ok("a b".into()));
    }
}
