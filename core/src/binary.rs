//! The binary form: exactly the 16 bytes, big-endian, as `uuid` sends them. Used by binary COPY,
//! binary-mode logical replication and drivers' binary protocol.

use crate::layout::Id;

/// Decodes a binary value; `Err(len)` when the input is not exactly 16 bytes.
pub fn decode(bytes: &[u8]) -> Result<Id, usize> {
    <[u8; 16]>::try_from(bytes).map(Id).map_err(|_| bytes.len())
}

pub fn encode(id: Id) -> [u8; 16] {
    id.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_16_bytes_decode() {
        assert_eq!(decode(&[7u8; 16]), Ok(Id([7; 16])));
        assert_eq!(decode(&[7u8; 15]), Err(15));
        assert_eq!(decode(&[7u8; 17]), Err(17));
        assert_eq!(decode(&[]), Err(0));
        assert_eq!(encode(Id::MAX), [0xFF; 16]);
    }
}
