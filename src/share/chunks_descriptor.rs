//! The text that names memory exported chunk by chunk (a pool block, a
//! whole segment): `ascend-chunks-v1 <chunk> <offset> <len> <token>...`.

use super::handle::ShareableHandle;
use super::owned_export::OwnedExport;
use crate::error::{Call, Error, Result};
use std::sync::Arc;

/// The first word of a descriptor.
const PREFIX: &str = "ascend-chunks-v1";

/// Memory exported chunk by chunk: `len` bytes from `offset` in the first
/// of the chunks the tokens name, in address order.
pub(crate) struct ChunksDescriptor {
    pub(crate) chunk: usize,
    pub(crate) offset: usize,
    pub(crate) len: usize,
    pub(crate) tokens: Vec<ShareableHandle>,
}

/// The descriptor of `len` bytes from `offset` in the chunks of `exports`.
pub(crate) fn describe(chunk: usize, offset: usize, len: usize, exports: &[Arc<OwnedExport>]) -> String {
    let mut text = format!("{PREFIX} {chunk} {offset} {len}");
    for export in exports {
        text.push(' ');
        text.push_str(&export.token().to_string());
    }
    text
}

impl ChunksDescriptor {
    /// Reads a descriptor and checks that its numbers fit together: the
    /// bytes lie inside the chunks, one token per chunk, each of the chunk
    /// size.
    pub(crate) fn parse(call: Call, text: &str) -> Result<Self> {
        let invalid = |reason: String| Error::invalid(call, reason);
        let mut words = text.split_whitespace();
        if words.next() != Some(PREFIX) {
            return Err(invalid(format!("not a descriptor (it starts with `{PREFIX}`)")));
        }
        let mut number = |what: &str| -> Result<usize> {
            words
                .next()
                .and_then(|word| word.parse().ok())
                .ok_or_else(|| invalid(format!("no {what}")))
        };
        let (chunk, offset, len) = (number("chunk size")?, number("offset")?, number("length")?);
        let tokens = words.map(str::parse::<ShareableHandle>).collect::<Result<Vec<_>>>()?;
        // The chunks must fit in the address space together (the importer
        // reserves them as one range).
        let needed = offset
            .checked_add(len)
            .filter(|_| chunk > 0 && len > 0 && offset < chunk)
            .map(|end| end.div_ceil(chunk))
            .filter(|&needed| {
                needed
                    .checked_mul(chunk)
                    .is_some_and(|total| total <= isize::MAX as usize)
            })
            .ok_or_else(|| invalid(format!("{len} bytes at {offset} in {chunk}-byte chunks")))?;
        if tokens.len() != needed || tokens.iter().any(|token| token.size() != chunk) {
            return Err(invalid(format!(
                "{len} bytes at {offset} need {needed} tokens of {chunk} bytes, not {} ({:?})",
                tokens.len(),
                tokens.iter().map(ShareableHandle::size).collect::<Vec<_>>()
            )));
        }
        Ok(Self {
            chunk,
            offset,
            len,
            tokens,
        })
    }
}
