//! Max-pooling of the last two emulator frames (removes Atari sprite flicker).

/// `dst[i] = max(dst[i], src[i])`. Written as a plain zip so the compiler vectorises it (pmaxub).
pub fn maxpool_into(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "maxpool frames must have equal sizes");
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = (*d).max(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_elementwise_maximum() {
        let mut a = vec![0u8, 5, 200, 255, 7];
        maxpool_into(&mut a, &[1, 4, 201, 0, 7]);
        assert_eq!(a, vec![1, 5, 201, 255, 7]);
    }
}
