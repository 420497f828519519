//! Lower-case hexadecimal text for the bytes of handles and keys.

use std::fmt::Write;

/// `bytes` as lower-case hexadecimal, two digits a byte.
pub(crate) fn encode(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        // Writing to a `String` cannot fail.
        let _ = write!(text, "{byte:02x}");
    }
    text
}

/// The bytes `text` spells (two hexadecimal digits a byte, either case), or
/// `None` when it is not such text.
pub(crate) fn decode(text: &str) -> Option<Vec<u8>> {
    text.as_bytes()
        .chunks(2)
        .map(|pair| match pair {
            [high, low] => {
                let high = char::from(*high).to_digit(16)?;
                let low = char::from(*low).to_digit(16)?;
                u8::try_from(high * 16 + low).ok()
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_what_is_not_hex() {
        let bytes = [0u8, 1, 0x7f, 0x80, 0xff];
        assert_eq!(encode(&bytes), "00017f80ff");
        assert_eq!(decode("00017F80ff").as_deref(), Some(&bytes[..]));
        assert_eq!(decode(""), Some(Vec::new()));
        assert_eq!(decode("abc"), None, "odd length");
        assert_eq!(decode("0g"), None, "not a digit");
        assert_eq!(decode("é0"), None, "not ASCII");
    }
}
