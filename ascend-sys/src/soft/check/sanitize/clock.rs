//! Vector clocks: what each actor (the host, or one stream) is known to
//! have done before a point of another actor's order.

/// An actor: the host (all host threads together, [`HOST`]) or one stream
/// (its software-device id, from 1).
pub(crate) type Actor = u64;

/// The host, as one actor: host threads order their own work among
/// themselves (the sanitizer checks the device side of the program).
pub(crate) const HOST: Actor = 0;

/// For each actor, the number of its operations known to come before this
/// point (missing: none). Sorted by actor; small (the actors that ever
/// ordered anything with this one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Clock {
    entries: Vec<(Actor, u64)>,
}

impl Clock {
    /// How many of `actor`'s operations are known to come before.
    pub(crate) fn get(&self, actor: Actor) -> u64 {
        match self.entries.binary_search_by_key(&actor, |&(a, _)| a) {
            Ok(index) => self.entries[index].1,
            Err(_) => 0,
        }
    }

    /// Counts one more operation of `actor` (its own clock); returns its
    /// number.
    pub(crate) fn tick(&mut self, actor: Actor) -> u64 {
        match self.entries.binary_search_by_key(&actor, |&(a, _)| a) {
            Ok(index) => {
                self.entries[index].1 += 1;
                self.entries[index].1
            }
            Err(index) => {
                self.entries.insert(index, (actor, 1));
                1
            }
        }
    }

    /// Learns everything `other` knows (the pointwise maximum).
    pub(crate) fn join(&mut self, other: &Clock) {
        // In place when this clock already names every actor of `other`
        // (the usual case: nothing is allocated); the maxima taken here
        // stand if the merge below is still needed.
        let mut missing = false;
        for &(actor, count) in &other.entries {
            match self.entries.binary_search_by_key(&actor, |&(a, _)| a) {
                Ok(index) => self.entries[index].1 = self.entries[index].1.max(count),
                Err(_) => missing = true,
            }
        }
        if !missing {
            return;
        }
        let mut merged = Vec::with_capacity(self.entries.len().max(other.entries.len()));
        let (mut mine, mut theirs) = (self.entries.iter().peekable(), other.entries.iter().peekable());
        loop {
            let next = match (mine.peek(), theirs.peek()) {
                (Some(&&(a, x)), Some(&&(b, y))) if a == b => {
                    mine.next();
                    theirs.next();
                    (a, x.max(y))
                }
                (Some(&&(a, x)), Some(&&(b, _))) if a < b => {
                    mine.next();
                    (a, x)
                }
                (_, Some(&&(b, y))) => {
                    theirs.next();
                    (b, y)
                }
                (Some(&&(a, x)), None) => {
                    mine.next();
                    (a, x)
                }
                (None, None) => break,
            };
            merged.push(next);
        }
        self.entries = merged;
    }

    /// Counts every operation of `actor`, past and future, as known to come
    /// before (for a check only: a blocking callback's host accesses come
    /// before whatever its stream runs after it).
    pub(crate) fn all_of(&mut self, actor: Actor) {
        let mut every = Clock::default();
        every.entries.push((actor, u64::MAX));
        self.join(&every);
    }

    /// Whether operation `epoch` of `actor` is known to come before.
    pub(crate) fn has_seen(&self, actor: Actor, epoch: u64) -> bool {
        self.get(actor) >= epoch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_takes_the_pointwise_maximum_and_tick_counts() {
        let mut a = Clock::default();
        assert_eq!(a.tick(3), 1);
        assert_eq!(a.tick(3), 2);
        a.tick(1);
        let mut b = Clock::default();
        b.tick(2);
        for _ in 0..5 {
            b.tick(3);
        }
        a.join(&b);
        assert_eq!((a.get(1), a.get(2), a.get(3), a.get(4)), (1, 1, 5, 0));
        assert!(a.has_seen(3, 5) && !a.has_seen(3, 6));
        let before = a.clone();
        a.join(&Clock::default());
        assert_eq!(a, before);
    }
}
