//! A bounded output buffer that keeps the first and the last half of its capacity and drops
//! the middle, so a chatty process cannot grow memory without bound.

/// Output kept for the next read: head, dropped byte count, rolling tail.
#[derive(Debug)]
pub(crate) struct HeadTailBuffer {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    head_cap: usize,
    tail_cap: usize,
    omitted: usize,
}

impl HeadTailBuffer {
    /// A buffer keeping at most `cap` bytes.
    pub(crate) fn new(cap: usize) -> Self {
        let head_cap = cap / 2;
        Self {
            head: Vec::new(),
            tail: std::collections::VecDeque::new(),
            head_cap,
            tail_cap: cap - head_cap,
            omitted: 0,
        }
    }

    /// Appends bytes, spilling the oldest tail bytes once the buffer is full.
    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        if self.head.len() < self.head_cap {
            let take = bytes.len().min(self.head_cap - self.head.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        self.tail.extend(bytes);
        let excess = self.tail.len().saturating_sub(self.tail_cap);
        if excess > 0 {
            self.tail.drain(..excess);
            self.omitted += excess;
        }
    }

    /// Takes everything buffered as text (lossy UTF-8), with an omission marker if needed.
    pub(crate) fn drain(&mut self) -> String {
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        if self.omitted > 0 {
            out.push_str(&format!("\n... {} bytes omitted ...\n", self.omitted));
        }
        let tail: Vec<u8> = self.tail.drain(..).collect();
        out.push_str(&String::from_utf8_lossy(&tail));
        self.head.clear();
        self.omitted = 0;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::HeadTailBuffer;

    #[test]
    fn keeps_head_and_tail_and_counts_the_middle() {
        let mut buf = HeadTailBuffer::new(8);
        buf.push(b"abcdef");
        buf.push(b"ghijkl");
        assert_eq!(buf.drain(), "abcd\n... 4 bytes omitted ...\nijkl");
        buf.push(b"xy");
        assert_eq!(buf.drain(), "xy");
    }
}
