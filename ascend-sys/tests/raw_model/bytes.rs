//! The bytes the model knows of one allocation: sparse 4 KiB pages, each
//! byte either known (written by a copy or a memset the model saw succeed)
//! or unknown (never written: fresh memory is not promised to be zero, and
//! the harness writes zeros into unknown bytes before it reads them).

use std::collections::BTreeMap;

const PAGE: usize = 4096;

struct Page {
    data: [u8; PAGE],
    known: [bool; PAGE],
}

/// Known bytes by offset.
#[derive(Default)]
pub struct Bytes {
    pages: BTreeMap<usize, Box<Page>>,
}

impl Bytes {
    /// Runs `body(page, offset in page, offset in the run, length)` over the
    /// pages `[offset, offset + len)` touches, creating missing pages.
    fn for_pages(&mut self, offset: usize, len: usize, mut body: impl FnMut(&mut Page, usize, usize, usize)) {
        let mut done = 0;
        while done < len {
            let at = offset + done;
            let (index, within) = (at / PAGE, at % PAGE);
            let take = (PAGE - within).min(len - done);
            let page = self.pages.entry(index).or_insert_with(|| {
                Box::new(Page {
                    data: [0; PAGE],
                    known: [false; PAGE],
                })
            });
            body(page, within, done, take);
            done += take;
        }
    }

    /// Records `data` written at `offset`.
    pub fn write(&mut self, offset: usize, data: &[u8]) {
        self.for_pages(offset, data.len(), |page, within, from, take| {
            page.data[within..within + take].copy_from_slice(&data[from..from + take]);
            page.known[within..within + take].fill(true);
        });
    }

    /// Records `len` bytes of `value` at `offset`.
    pub fn fill(&mut self, offset: usize, len: usize, value: u8) {
        self.for_pages(offset, len, |page, within, _, take| {
            page.data[within..within + take].fill(value);
            page.known[within..within + take].fill(true);
        });
    }

    /// The runs of unknown bytes in `[offset, offset + len)`, as
    /// `(offset, len)`.
    pub fn unknown_runs(&self, offset: usize, len: usize) -> Vec<(usize, usize)> {
        let mut runs: Vec<(usize, usize)> = Vec::new();
        let mut unknown = |at: usize, n: usize| match runs.last_mut() {
            Some((start, run)) if *start + *run == at => *run += n,
            _ => runs.push((at, n)),
        };
        let mut done = 0;
        while done < len {
            let at = offset + done;
            let (index, within) = (at / PAGE, at % PAGE);
            let take = (PAGE - within).min(len - done);
            match self.pages.get(&index) {
                None => unknown(at, take),
                Some(page) => {
                    for i in 0..take {
                        if !page.known[within + i] {
                            unknown(at + i, 1);
                        }
                    }
                }
            }
            done += take;
        }
        runs
    }

    /// The first known byte of `[offset, offset + actual.len())` that
    /// differs from `actual`: `(offset, expected, actual)`.
    pub fn mismatch(&self, offset: usize, actual: &[u8]) -> Option<(usize, u8, u8)> {
        let mut done = 0;
        while done < actual.len() {
            let at = offset + done;
            let (index, within) = (at / PAGE, at % PAGE);
            let take = (PAGE - within).min(actual.len() - done);
            if let Some(page) = self.pages.get(&index) {
                for i in 0..take {
                    if page.known[within + i] && page.data[within + i] != actual[done + i] {
                        return Some((at + i, page.data[within + i], actual[done + i]));
                    }
                }
            }
            done += take;
        }
        None
    }
}
