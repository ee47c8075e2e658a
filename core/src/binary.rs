//! The binary form: exactly the 16 bytes, big-endian, as `uuid` sends them. Used by binary COPY,
//! binary-mode logical replication and drivers' binary protocol.

use crate::layout::Id;

/// Decodes a binary value; `Err(len)` when the input is not exactly 16 bytes.
pub fn decode(bytes: &[u8]) -> Result<Id, usize> {
    <[u8; 16]>::try_from(bytes).map(Id).map_err(|_| bytes.len())
}

/// Encodes a value: its 16 bytes, most significant first.
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
    }

    #[test]
    fn encodes_the_value_big_endian_as_uuid_sends_it() {
        // the canonical text is the value in hex, most significant digit first, and so are
        // the bytes of the binary form
        let id: Id = "017FC21C5E7A-0001-000A-AAA333333333".parse().unwrap();
        let sent = [
            0x01, 0x7F, 0xC2, 0x1C, 0x5E, 0x7A, 0x00, 0x01, 0x00, 0x0A, 0xAA, 0xA3, 0x33, 0x33,
            0x33, 0x33,
        ];
        assert_eq!(encode(id), sent);
        assert_eq!(decode(&sent), Ok(id));
    }
}
