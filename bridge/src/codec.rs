//! Framing of the host protocol: a 4-byte little-endian length, then that many bytes of JSON
//! (spec §8.3). EOF exactly at a frame boundary is a clean close.

use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

use crate::BridgeError;

/// The largest frame either side sends or accepts: 64 MiB.
pub const MAX_FRAME_BYTES: usize = 64 * 1024 * 1024;

/// Length of the little-endian `u32` frame prefix.
const PREFIX_BYTES: usize = 4;

/// Reads length-prefixed frames. Reads are buffered: a frame usually arrives in one read
/// system call, prefix included.
#[derive(Debug)]
pub struct FrameReader<R> {
    reader: BufReader<R>,
    max_frame: usize,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// Reads frames of up to [`MAX_FRAME_BYTES`].
    pub fn new(reader: R) -> Self {
        Self::with_max_frame(reader, MAX_FRAME_BYTES)
    }

    /// Reads frames of up to `max_frame` bytes.
    pub fn with_max_frame(reader: R, max_frame: usize) -> Self {
        Self {
            reader: BufReader::new(reader),
            max_frame,
        }
    }

    /// The next frame, or `None` on a clean close.
    pub async fn read_frame(&mut self) -> Result<Option<Vec<u8>>, BridgeError> {
        let mut prefix = [0u8; PREFIX_BYTES];
        let mut filled = 0;
        while filled < prefix.len() {
            let n = self.reader.read(&mut prefix[filled..]).await?;
            if n == 0 {
                if filled == 0 {
                    return Ok(None);
                }
                return Err(BridgeError::TruncatedFrame {
                    expected: prefix.len(),
                    got: filled,
                });
            }
            filled += n;
        }
        let len = u32::from_le_bytes(prefix) as usize;
        if len > self.max_frame {
            return Err(BridgeError::FrameTooLarge {
                len,
                max: self.max_frame,
            });
        }
        // Grow as bytes arrive instead of trusting the prefix with one large allocation.
        let mut payload = Vec::new();
        (&mut self.reader)
            .take(len as u64)
            .read_to_end(&mut payload)
            .await?;
        if payload.len() != len {
            return Err(BridgeError::TruncatedFrame {
                expected: len,
                got: payload.len(),
            });
        }
        Ok(Some(payload))
    }

    /// The next message, or `None` on a clean close.
    pub async fn read_message<T: DeserializeOwned>(&mut self) -> Result<Option<T>, BridgeError> {
        match self.read_frame().await? {
            Some(frame) => Ok(Some(serde_json::from_slice(&frame)?)),
            None => Ok(None),
        }
    }
}

/// Writes length-prefixed frames.
#[derive(Debug)]
pub struct FrameWriter<W> {
    writer: W,
    max_frame: usize,
}

impl<W: AsyncWrite + Unpin> FrameWriter<W> {
    /// Writes frames of up to [`MAX_FRAME_BYTES`].
    pub fn new(writer: W) -> Self {
        Self::with_max_frame(writer, MAX_FRAME_BYTES)
    }

    /// Writes frames of up to `max_frame` bytes.
    pub fn with_max_frame(writer: W, max_frame: usize) -> Self {
        Self { writer, max_frame }
    }

    /// The largest payload this writer sends.
    pub fn max_frame(&self) -> usize {
        self.max_frame
    }

    /// Writes and flushes one frame; a payload above the limit is refused, nothing is written.
    pub async fn write_frame(&mut self, payload: &[u8]) -> Result<(), BridgeError> {
        let len = u32::try_from(payload.len())
            .ok()
            .filter(|len| *len as usize <= self.max_frame)
            .ok_or(BridgeError::FrameTooLarge {
                len: payload.len(),
                max: self.max_frame,
            })?;
        // One write per frame: a prefix written on its own would wake the reader for four
        // bytes and make it wait again for the payload.
        let mut frame = Vec::with_capacity(PREFIX_BYTES + payload.len());
        frame.extend_from_slice(&len.to_le_bytes());
        frame.extend_from_slice(payload);
        self.write_whole_frame(&frame).await
    }

    /// Serializes and writes one message.
    pub async fn write_message<T: Serialize>(&mut self, message: &T) -> Result<(), BridgeError> {
        let mut frame = vec![0u8; PREFIX_BYTES];
        serde_json::to_writer(&mut frame, message)?;
        let payload_len = frame.len() - PREFIX_BYTES;
        let len = u32::try_from(payload_len)
            .ok()
            .filter(|len| *len as usize <= self.max_frame)
            .ok_or(BridgeError::FrameTooLarge {
                len: payload_len,
                max: self.max_frame,
            })?;
        frame[..PREFIX_BYTES].copy_from_slice(&len.to_le_bytes());
        self.write_whole_frame(&frame).await
    }

    async fn write_whole_frame(&mut self, frame: &[u8]) -> Result<(), BridgeError> {
        self.writer.write_all(frame).await?;
        self.writer.flush().await?;
        Ok(())
    }

    /// Flushes and shuts the writer down (the peer sees a clean close).
    pub async fn shutdown(&mut self) -> Result<(), BridgeError> {
        self.writer.shutdown().await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_round_trip_and_eof_at_a_boundary_is_a_clean_close() {
        let (a, b) = tokio::io::duplex(64);
        let mut writer = FrameWriter::new(a);
        let mut reader = FrameReader::new(b);
        let send = tokio::spawn(async move {
            writer
                .write_message(&serde_json::json!({ "type": "x", "n": 1 }))
                .await
                .unwrap();
            writer.write_frame(&[]).await.unwrap();
            writer.write_frame(&vec![b'7'; 1000]).await.unwrap();
        });
        let first: serde_json::Value = reader.read_message().await.unwrap().unwrap();
        assert_eq!(first, serde_json::json!({ "type": "x", "n": 1 }));
        assert_eq!(reader.read_frame().await.unwrap(), Some(Vec::new()));
        assert_eq!(reader.read_frame().await.unwrap(), Some(vec![b'7'; 1000]));
        send.await.unwrap();
        assert_eq!(reader.read_frame().await.unwrap(), None);
    }

    #[tokio::test]
    async fn the_length_prefix_is_little_endian() {
        let mut out = Vec::new();
        FrameWriter::new(&mut out)
            .write_frame(b"abc")
            .await
            .unwrap();
        assert_eq!(out, b"\x03\x00\x00\x00abc");
    }

    #[tokio::test]
    async fn a_frame_above_the_limit_is_rejected_on_both_sides() {
        let mut out = Vec::new();
        let err = FrameWriter::with_max_frame(&mut out, 4)
            .write_frame(b"12345")
            .await
            .unwrap_err();
        assert!(
            matches!(err, BridgeError::FrameTooLarge { len: 5, max: 4 }),
            "{err}"
        );
        assert!(out.is_empty());

        let prefix = ((MAX_FRAME_BYTES + 1) as u32).to_le_bytes();
        let err = FrameReader::new(&prefix[..])
            .read_frame()
            .await
            .unwrap_err();
        assert!(matches!(err, BridgeError::FrameTooLarge { .. }), "{err}");
        assert_eq!(
            err.to_string(),
            "frame of 67108865 bytes exceeds the 67108864-byte limit"
        );
    }

    #[tokio::test]
    async fn eof_inside_a_frame_is_an_error() {
        let err = FrameReader::new(&b"\x05\x00\x00\x00ab"[..])
            .read_frame()
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                BridgeError::TruncatedFrame {
                    expected: 5,
                    got: 2
                }
            ),
            "{err}"
        );
        let err = FrameReader::new(&b"\x05\x00"[..])
            .read_frame()
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                BridgeError::TruncatedFrame {
                    expected: 4,
                    got: 2
                }
            ),
            "{err}"
        );
    }

    #[tokio::test]
    async fn garbage_json_is_an_invalid_message() {
        let err = FrameReader::new(&b"\x02\x00\x00\x00{x"[..])
            .read_message::<serde_json::Value>()
            .await
            .unwrap_err();
        assert!(matches!(err, BridgeError::InvalidMessage(_)), "{err}");
    }
}
