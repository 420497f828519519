//! The store's line protocol (this crate's own, not MemFabric's): one
//! request line from the client, one answer line from the server, in ASCII
//! words separated by single spaces, each line ending in `\n`.
//!
//! | request | answer |
//! |---|---|
//! | `HELLO <pid> <world size> <rank or "auto">` | `OK <rank>`: joins the world |
//! | `PUT <key> <value...>` | `OK` |
//! | `GET <key>` | `OK <value...>` or `NONE` |
//! | `RANK <rank>` | `OK absent`, `OK alive`, `OK left` or `OK dead` |
//! | `PAGE` | `OK <pid> <fd>`: the page of rank states (`/proc/<pid>/fd/<fd>`), or `NONE` |
//! | `LEAVE` | `OK`, then the server closes the connection |
//!
//! Any request can be answered `ERR <code> <message...>`. A rank keeps its
//! connection open while it is in the world: a connection that closes
//! without `LEAVE` marks the rank dead. Keys hold no spaces; values may.

use crate::types::SMEM_ERROR;

/// An answer line: `OK rest`, `NONE`, or `ERR code message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// `OK` and the rest of the line.
    Ok(String),
    /// `NONE`.
    None,
    /// `ERR code message`.
    Err(i32, String),
}

impl Answer {
    /// Parses an answer line (without its `\n`).
    pub(crate) fn parse(line: &str) -> Self {
        if line == "OK" {
            return Self::Ok(String::new());
        }
        if let Some(rest) = line.strip_prefix("OK ") {
            return Self::Ok(rest.to_string());
        }
        if line == "NONE" {
            return Self::None;
        }
        if let Some(rest) = line.strip_prefix("ERR ") {
            let (code, message) = rest.split_once(' ').unwrap_or((rest, ""));
            return Self::Err(code.parse().unwrap_or(SMEM_ERROR), message.to_string());
        }
        Self::Err(SMEM_ERROR, format!("the store answered {line:?}"))
    }

    /// The line for this answer, with its `\n`.
    pub(crate) fn line(&self) -> String {
        match self {
            Self::Ok(rest) if rest.is_empty() => "OK\n".into(),
            Self::Ok(rest) => format!("OK {rest}\n"),
            Self::None => "NONE\n".into(),
            Self::Err(code, message) => format!("ERR {code} {}\n", message.replace('\n', " ")),
        }
    }
}

/// The state of a rank as the store sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RankState {
    /// Never joined.
    Absent,
    /// Joined, connection open.
    Alive,
    /// Left with `LEAVE`.
    Left,
    /// Its connection closed without `LEAVE`.
    Dead,
}

impl RankState {
    /// The protocol word.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Self::Absent => "absent",
            Self::Alive => "alive",
            Self::Left => "left",
            Self::Dead => "dead",
        }
    }

    /// Parses the protocol word.
    pub(crate) fn parse(word: &str) -> Option<Self> {
        Some(match word {
            "absent" => Self::Absent,
            "alive" => Self::Alive,
            "left" => Self::Left,
            "dead" => Self::Dead,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_round_trip() {
        for answer in [
            Answer::Ok(String::new()),
            Answer::Ok("3 x y".into()),
            Answer::None,
            Answer::Err(-2000, "bad rank".into()),
        ] {
            assert_eq!(Answer::parse(answer.line().trim_end_matches('\n')), answer);
        }
        assert_eq!(
            Answer::parse("what"),
            Answer::Err(SMEM_ERROR, "the store answered \"what\"".into())
        );
        for state in [RankState::Absent, RankState::Alive, RankState::Left, RankState::Dead] {
            assert_eq!(RankState::parse(state.word()), Some(state));
        }
    }
}
