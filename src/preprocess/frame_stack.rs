//! A circular stack of the last `stack_num` processed frames.
//!
//! New frames are written in place into the oldest slot (the resize writes straight into it); the
//! stack is linearised oldest-first only when copied out, once, into the caller's batch array.

pub struct FrameStack {
    frames: Vec<u8>,
    frame_size: usize,
    stack_num: usize,
    /// Slot the next frame goes into; it is also the oldest frame.
    next: usize,
}

impl FrameStack {
    pub fn new(stack_num: usize, frame_size: usize) -> Self {
        assert!(stack_num > 0 && frame_size > 0, "frame stack needs stack_num > 0 and frame_size > 0");
        Self { frames: vec![0; stack_num * frame_size], frame_size, stack_num, next: 0 }
    }

    pub fn stack_num(&self) -> usize {
        self.stack_num
    }

    pub fn frame_size(&self) -> usize {
        self.frame_size
    }

    /// Bytes of one linearised stack.
    pub fn stacked_size(&self) -> usize {
        self.frames.len()
    }

    /// Zero every frame (episode start: the stack is zero-padded, as gymnasium's FrameStackObservation).
    pub fn clear(&mut self) {
        self.frames.fill(0);
        self.next = 0;
    }

    /// The slot for the next frame, to be filled by the caller before calling [`advance`](Self::advance).
    pub fn next_slot(&mut self) -> &mut [u8] {
        let start = self.next * self.frame_size;
        &mut self.frames[start..start + self.frame_size]
    }

    /// Commits the slot returned by [`next_slot`](Self::next_slot) as the newest frame.
    pub fn advance(&mut self) {
        self.next = (self.next + 1) % self.stack_num;
    }

    /// The frames as stored (circular) and the slot the next frame goes into, for a saved env.
    pub fn frames(&self) -> &[u8] {
        &self.frames
    }
    pub fn next_index(&self) -> usize {
        self.next
    }

    /// Puts back saved [`frames`](Self::frames) and [`next_index`](Self::next_index).
    pub fn restore(&mut self, frames: &[u8], next: usize) {
        assert!(next < self.stack_num, "the next slot must be one of the stack's");
        self.frames.copy_from_slice(frames);
        self.next = next;
    }

    /// Copies the stack oldest-first into `dst` (exactly `stacked_size()` bytes).
    pub fn write_linear(&self, dst: &mut [u8]) {
        assert_eq!(dst.len(), self.frames.len(), "destination must hold one whole stack");
        let split = self.next * self.frame_size;
        let tail = self.frames.len() - split;
        dst[..tail].copy_from_slice(&self.frames[split..]);
        dst[tail..].copy_from_slice(&self.frames[..split]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linearises_oldest_first_with_zero_padding() {
        let mut stack = FrameStack::new(3, 2);
        for value in [1u8, 2] {
            stack.next_slot().fill(value);
            stack.advance();
        }
        let mut out = vec![9u8; 6];
        stack.write_linear(&mut out);
        assert_eq!(out, vec![0, 0, 1, 1, 2, 2]);
        for value in [3u8, 4] {
            stack.next_slot().fill(value);
            stack.advance();
        }
        stack.write_linear(&mut out);
        assert_eq!(out, vec![2, 2, 3, 3, 4, 4]);
        stack.clear();
        stack.write_linear(&mut out);
        assert_eq!(out, vec![0; 6]);
    }
}
