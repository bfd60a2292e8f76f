//! Image resize reproducing OpenCV's `cv::resize(..., INTER_AREA)` on `u8` images, which ale_py's
//! vectorizer and gymnasium's AtariPreprocessing use.
//!
//! OpenCV picks one of three algorithms for INTER_AREA, and so do we:
//! - integer down-scale factors: block averaging (`resizeAreaFast`); x86 OpenCV rounds 2x2 blocks
//!   half-up with SIMD, and we do the same everywhere;
//! - other down-scales: exact area weights in `f32` (`resizeArea_` with `computeResizeAreaTab`), with
//!   the same table, accumulation order and round-half-even, so 210x160 -> 84x84 is bit-exact;
//! - any up-scale: bilinear (OpenCV falls back to INTER_LINEAR), with its 11-bit fixed-point weights.
//!
//! All tables and scratch rows are built once in [`Resizer::new`]; [`Resizer::resize`] allocates nothing.

/// For each destination index along one axis: the first source index it covers and the weights of
/// the contiguous source indices from there, in OpenCV's order (the order sums are accumulated in).
#[derive(Debug)]
struct AreaAxis {
    first: Vec<usize>,
    weights: Vec<Vec<f32>>,
    /// Most taps any destination index needs.
    max_taps: usize,
    /// The weights padded with zeros to `MAX_FIXED_TAPS` (adding `0.0 * 0.0` to a non-negative sum
    /// changes no bit), so the hot horizontal pass can run with a compile-time tap count.
    padded: Vec<[f32; MAX_FIXED_TAPS]>,
}

const MAX_FIXED_TAPS: usize = 4;

impl AreaAxis {
    fn pad(mut self) -> Self {
        self.max_taps = self.weights.iter().map(Vec::len).max().unwrap_or(0);
        self.padded = self.weights.iter().map(|w| std::array::from_fn(|k| w.get(k).copied().unwrap_or(0.0))).collect();
        self
    }
}

/// Horizontal pass of one row (converted to `f32` and padded with zeros) with `T` taps per
/// destination pixel and `C` interleaved channels, accumulated in OpenCV's order. Both are
/// compile-time constants so the loop has no index arithmetic or bounds checks inside.
fn horizontal_pass<const T: usize, const C: usize>(row: &[f32], axis: &AreaAxis, out: &mut [f32]) {
    for ((&first, weights), pixel) in axis.first.iter().zip(&axis.padded).zip(out.chunks_exact_mut(C)) {
        let taps = &row[first * C..(first + T) * C];
        for c in 0..C {
            let mut acc = 0.0f32;
            for k in 0..T {
                acc = multiply_add(taps[k * C + c], weights[k], acc);
            }
            pixel[c] = acc;
        }
    }
}

/// Rows the multi-row horizontal pass handles at once, one per SIMD lane.
const LANES: usize = 8;

/// Horizontal pass of `LANES` rows at once, `T` taps, `C` interleaved channels: `tile[x * C + c][lane]`
/// is channel `c` of source pixel `x` in row `lane` (zero-padded), `out[dx * C + c][lane]` gets
/// destination pixel `dx`. Each lane does exactly the per-pixel arithmetic of [`horizontal_pass`]
/// (same products, same order), so results are bit-identical; running the lanes side by side lets
/// the compiler use vector instructions, which the one-row pass (a different source offset per
/// destination pixel) cannot.
fn horizontal_pass_lanes<const T: usize, const C: usize>(
    tile: &[[f32; LANES]],
    axis: &AreaAxis,
    out: &mut [[f32; LANES]],
) {
    for ((&first, weights), pixel) in axis.first.iter().zip(&axis.padded).zip(out.chunks_exact_mut(C)) {
        let taps = &tile[first * C..(first + T) * C];
        for (c, channel) in pixel.iter_mut().enumerate() {
            let mut acc = [0.0f32; LANES];
            for k in 0..T {
                for lane in 0..LANES {
                    acc[lane] = multiply_add(taps[k * C + c][lane], weights[k], acc[lane]);
                }
            }
            *channel = acc;
        }
    }
}

/// Horizontal pass for any tap count and channel count (rare sizes).
fn horizontal_pass_any(row: &[f32], axis: &AreaAxis, channels: usize, out: &mut [f32]) {
    for ((&first, weights), pixel) in axis.first.iter().zip(&axis.weights).zip(out.chunks_exact_mut(channels)) {
        let taps = &row[first * channels..(first + weights.len()) * channels];
        for (c, value) in pixel.iter_mut().enumerate() {
            let mut acc = 0.0f32;
            for (tap, &w) in taps.chunks_exact(channels).zip(weights) {
                acc = multiply_add(tap[c], w, acc);
            }
            *value = acc;
        }
    }
}

enum Method {
    Copy,
    AreaFast {
        scale_x: usize,
        scale_y: usize,
    },
    /// `rows` is a ring of the horizontal passes of the last source rows (as many as one destination
    /// row spans): OpenCV recomputes a source row for each destination row it touches, with identical
    /// results, so computing it once changes no bit; the ring keeps the working set small.
    /// `row_f32` is one source row as `f32`, padded with zeros for the fixed-tap pass.
    Area {
        x: AreaAxis,
        y: AreaAxis,
        rows: Vec<f32>,
        sum: Vec<f32>,
        row_f32: Vec<f32>,
    },
    /// Area resize of gray or RGB images with up to `MAX_FIXED_TAPS` taps: the horizontal pass runs
    /// `LANES` rows at a time through `tile` (source rows transposed) and `lanes_out`, into `rows`,
    /// which keeps every source row's pass so that [`Resizer::resize_changed_rows`] recomputes only
    /// what changed; `last_out` is the last result (`None` before the first).
    AreaLanes {
        x: AreaAxis,
        y: AreaAxis,
        rows: Vec<f32>,
        sum: Vec<f32>,
        tile: Vec<[f32; LANES]>,
        lanes_out: Vec<[f32; LANES]>,
        last_out: Option<Vec<u8>>,
    },
    Linear {
        xofs: Vec<usize>,
        xw: Vec<[i32; 2]>,
        yofs: Vec<usize>,
        yw: Vec<[i32; 2]>,
        rows: [Vec<i32>; 2],
    },
}

pub struct Resizer {
    src_h: usize,
    src_w: usize,
    dst_h: usize,
    dst_w: usize,
    channels: usize,
    method: Method,
}

const LINEAR_COEF_BITS: u32 = 11;
const LINEAR_COEF_SCALE: f32 = (1 << LINEAR_COEF_BITS) as f32;

/// OpenCV's `computeResizeAreaTab`: the area each destination cell covers in one dimension.
fn area_axis(src_size: usize, dst_size: usize, scale: f64) -> AreaAxis {
    let mut axis = AreaAxis {
        first: Vec::with_capacity(dst_size),
        weights: Vec::with_capacity(dst_size),
        max_taps: 0,
        padded: Vec::new(),
    };
    for dx in 0..dst_size {
        let fsx1 = dx as f64 * scale;
        let fsx2 = fsx1 + scale;
        let cell_width = scale.min(src_size as f64 - fsx1);
        let mut sx2 = fsx2.floor() as i64;
        let mut sx1 = fsx1.ceil() as i64;
        sx2 = sx2.min(src_size as i64 - 1);
        sx1 = sx1.min(sx2);
        let mut first = sx1;
        let mut weights = Vec::with_capacity(4);
        if sx1 as f64 - fsx1 > 1e-3 {
            first = sx1 - 1;
            weights.push(((sx1 as f64 - fsx1) / cell_width) as f32);
        }
        for _ in sx1..sx2 {
            weights.push((1.0 / cell_width) as f32);
        }
        if fsx2 - sx2 as f64 > 1e-3 {
            weights.push(((fsx2 - sx2 as f64).min(1.0).min(cell_width) / cell_width) as f32);
        }
        axis.first.push(first as usize);
        axis.weights.push(weights);
    }
    axis.pad()
}

/// OpenCV's bilinear source offsets and 11-bit fixed-point weights for one dimension.
fn linear_table(src_size: usize, dst_size: usize, scale: f64) -> (Vec<usize>, Vec<[i32; 2]>) {
    let mut offsets = Vec::with_capacity(dst_size);
    let mut weights = Vec::with_capacity(dst_size);
    for d in 0..dst_size {
        let f = ((d as f64 + 0.5) * scale - 0.5) as f32;
        let mut s = f.floor() as i64;
        let mut frac = f - s as f32;
        if s < 0 {
            s = 0;
            frac = 0.0;
        }
        if s >= src_size as i64 - 1 {
            s = src_size as i64 - 1;
            frac = 0.0;
        }
        let w1 = (frac * LINEAR_COEF_SCALE).round() as i32;
        offsets.push(s as usize);
        weights.push([(1 << LINEAR_COEF_BITS) - w1, w1]);
    }
    (offsets, weights)
}

/// `acc + a * b` rounded as OpenCV's INTER_AREA rounds it on this machine (ale_py's vector env resizes
/// with it): on aarch64 once, a fused multiply-add (its build there contracts `x += a * b` into one, and
/// its NEON code's `v_muladd` is one); on x86-64, whose baseline has no fused multiply-add, twice. Rust
/// never contracts on its own, so each target's rounding is chosen here.
#[inline(always)]
fn multiply_add(a: f32, b: f32, acc: f32) -> f32 {
    if cfg!(target_arch = "aarch64") {
        a.mul_add(b, acc)
    } else {
        acc + a * b
    }
}

/// OpenCV's `saturate_cast<uchar>(float)`: round half to even, then clamp. Clamping first is the
/// same for this range; rounding by adding and subtracting 1.5 * 2^23 is round-half-even in the
/// default FP mode and, unlike `round_ties_even`, needs no SSE4.1 instruction or libm call.
fn saturate_u8(value: f32) -> u8 {
    const MAGIC: f32 = 12_582_912.0;
    ((value.clamp(0.0, 255.0) + MAGIC) - MAGIC) as u8
}

/// One destination row of the vertical pass: the horizontal passes `row(k)` of its source rows,
/// weighted and summed in order, rounded to `u8`.
fn vertical_row<'r>(weights: &[f32], row: impl Fn(usize) -> &'r [f32], sum: &mut [f32], out: &mut [u8]) {
    sum.fill(0.0);
    for (k, &beta) in weights.iter().enumerate() {
        for (a, &r) in sum.iter_mut().zip(row(k)) {
            *a = multiply_add(beta, r, *a);
        }
    }
    for (o, &a) in out.iter_mut().zip(sum.iter()) {
        *o = saturate_u8(a);
    }
}

impl Resizer {
    /// A resizer from `src_h x src_w` to `dst_h x dst_w` images with `channels` interleaved channels.
    pub fn new(src_h: usize, src_w: usize, dst_h: usize, dst_w: usize, channels: usize) -> Self {
        assert!(src_h > 0 && src_w > 0 && dst_h > 0 && dst_w > 0 && channels > 0, "resize sizes must be positive");
        // Same arithmetic as cv::resize: the inverse of the inverse scale.
        let scale_x = 1.0 / (dst_w as f64 / src_w as f64);
        let scale_y = 1.0 / (dst_h as f64 / src_h as f64);
        let method = if src_h == dst_h && src_w == dst_w {
            Method::Copy
        } else if scale_x >= 1.0 && scale_y >= 1.0 {
            let (ix, iy) = (scale_x.round(), scale_y.round());
            if (scale_x - ix).abs() < f64::EPSILON && (scale_y - iy).abs() < f64::EPSILON {
                Method::AreaFast { scale_x: ix as usize, scale_y: iy as usize }
            } else {
                let y_axis = area_axis(src_h, dst_h, scale_y);
                let x_axis = area_axis(src_w, dst_w, scale_x);
                if matches!(channels, 1 | 3) && x_axis.max_taps <= MAX_FIXED_TAPS {
                    Method::AreaLanes {
                        x: x_axis,
                        y: y_axis,
                        rows: vec![0.0; src_h * dst_w * channels],
                        sum: vec![0.0; dst_w * channels],
                        tile: vec![[0.0; LANES]; (src_w + MAX_FIXED_TAPS) * channels],
                        lanes_out: vec![[0.0; LANES]; dst_w * channels],
                        last_out: None,
                    }
                } else {
                    Method::Area {
                        x: x_axis,
                        rows: vec![0.0; y_axis.max_taps.max(1) * dst_w * channels],
                        y: y_axis,
                        sum: vec![0.0; dst_w * channels],
                        row_f32: vec![0.0; (src_w + MAX_FIXED_TAPS) * channels],
                    }
                }
            }
        } else {
            let (xofs, xw) = linear_table(src_w, dst_w, scale_x);
            let (yofs, yw) = linear_table(src_h, dst_h, scale_y);
            Method::Linear { xofs, xw, yofs, yw, rows: [vec![0; dst_w * channels], vec![0; dst_w * channels]] }
        };
        Self { src_h, src_w, dst_h, dst_w, channels, method }
    }

    pub fn src_len(&self) -> usize {
        self.src_h * self.src_w * self.channels
    }

    pub fn dst_len(&self) -> usize {
        self.dst_h * self.dst_w * self.channels
    }

    /// Resizes an image of which only the source rows marked in `changed` can differ from the last
    /// call's image (`None`: any row may have changed): those rows' horizontal passes and the
    /// destination rows they reach are recomputed, the others copied from the last result. The
    /// output is bit-identical to [`resize`](Self::resize). Sizes other than area down-scales with
    /// at most `MAX_FIXED_TAPS` taps, and channel counts other than 1 and 3, are resized whole.
    pub fn resize_changed_rows(&mut self, src: &[u8], changed: Option<&[bool]>, dst: &mut [u8]) {
        let cn = self.channels;
        let (src_len, dst_len) = (self.src_len(), self.dst_len());
        let Method::AreaLanes { x, y, rows, sum, tile, lanes_out, last_out } = &mut self.method else {
            return self.resize(src, dst);
        };
        assert_eq!(src.len(), src_len, "source image has the wrong size");
        assert_eq!(dst.len(), dst_len, "destination image has the wrong size");
        let (src_row_len, width) = (self.src_w * cn, self.dst_w * cn);
        if let Some(changed) = changed {
            assert_eq!(changed.len(), self.src_h, "one changed flag per source row");
        }
        let last = last_out.as_deref().filter(|_| changed.is_some());
        let is_changed =
            |rows: std::ops::Range<usize>| last.is_none() || changed.is_some_and(|c| c[rows].contains(&true));
        for (group, src_rows) in src.chunks(src_row_len * LANES).enumerate() {
            let first_row = group * LANES;
            let count = src_rows.len() / src_row_len;
            if !is_changed(first_row..first_row + count) {
                continue;
            }
            for (lane, src_row) in src_rows.chunks_exact(src_row_len).enumerate() {
                for (t, &v) in tile.iter_mut().zip(src_row) {
                    t[lane] = v as f32;
                }
            }
            match (x.max_taps, cn) {
                (1, 1) => horizontal_pass_lanes::<1, 1>(tile, x, lanes_out),
                (2, 1) => horizontal_pass_lanes::<2, 1>(tile, x, lanes_out),
                (3, 1) => horizontal_pass_lanes::<3, 1>(tile, x, lanes_out),
                (_, 1) => horizontal_pass_lanes::<4, 1>(tile, x, lanes_out),
                (1, _) => horizontal_pass_lanes::<1, 3>(tile, x, lanes_out),
                (2, _) => horizontal_pass_lanes::<2, 3>(tile, x, lanes_out),
                (3, _) => horizontal_pass_lanes::<3, 3>(tile, x, lanes_out),
                (_, _) => horizontal_pass_lanes::<4, 3>(tile, x, lanes_out),
            }
            for lane in 0..count {
                let row = &mut rows[(first_row + lane) * width..(first_row + lane + 1) * width];
                for (o, pixel) in row.iter_mut().zip(lanes_out.iter()) {
                    *o = pixel[lane];
                }
            }
        }
        for (dy, out) in dst.chunks_exact_mut(width).enumerate() {
            let (first, weights) = (y.first[dy], &y.weights[dy]);
            match last {
                Some(last) if !is_changed(first..first + weights.len()) => {
                    out.copy_from_slice(&last[dy * width..(dy + 1) * width]);
                }
                _ => vertical_row(weights, |k| &rows[(first + k) * width..(first + k + 1) * width], sum, out),
            }
        }
        match last_out {
            Some(last) => last.copy_from_slice(dst),
            None => *last_out = Some(dst.to_vec()),
        }
    }

    // Over 60 lines: one arm per method, each its method's whole loop, so that the hot loops read in
    // one place next to the state they use.
    pub fn resize(&mut self, src: &[u8], dst: &mut [u8]) {
        assert_eq!(src.len(), self.src_len(), "source image has the wrong size");
        assert_eq!(dst.len(), self.dst_len(), "destination image has the wrong size");
        let (src_w, dst_w, cn) = (self.src_w, self.dst_w, self.channels);
        match &mut self.method {
            Method::Copy => dst.copy_from_slice(src),
            Method::AreaFast { scale_x, scale_y } => {
                let (sx, sy) = (*scale_x, *scale_y);
                let area = (sx * sy) as u32;
                let scale = 1.0f32 / area as f32;
                for dy in 0..self.dst_h {
                    for dx in 0..dst_w {
                        for c in 0..cn {
                            let mut total = 0u32;
                            for ky in 0..sy {
                                let row = (dy * sy + ky) * src_w * cn;
                                for kx in 0..sx {
                                    total += src[row + (dx * sx + kx) * cn + c] as u32;
                                }
                            }
                            dst[(dy * dst_w + dx) * cn + c] =
                                if area == 4 { ((total + 2) >> 2) as u8 } else { saturate_u8(total as f32 * scale) };
                        }
                    }
                }
            }
            Method::AreaLanes { .. } => self.resize_changed_rows(src, None, dst),
            Method::Area { x, y, rows, sum, row_f32 } => {
                let width = dst_w * cn;
                let ring = rows.len() / width;
                let mut next_dy = 0;
                for (sy, src_row) in src.chunks_exact(src_w * cn).enumerate() {
                    if next_dy == self.dst_h {
                        break;
                    }
                    // Horizontal pass of source row `sy`, into its slot of the ring of recent rows.
                    let out_row = &mut rows[(sy % ring) * width..(sy % ring + 1) * width];
                    for (f, &v) in row_f32.iter_mut().zip(src_row) {
                        *f = v as f32;
                    }
                    match (x.max_taps, cn) {
                        (1, 1) => horizontal_pass::<1, 1>(row_f32, x, out_row),
                        (2, 1) => horizontal_pass::<2, 1>(row_f32, x, out_row),
                        (3, 1) => horizontal_pass::<3, 1>(row_f32, x, out_row),
                        (4, 1) => horizontal_pass::<4, 1>(row_f32, x, out_row),
                        (1, 3) => horizontal_pass::<1, 3>(row_f32, x, out_row),
                        (2, 3) => horizontal_pass::<2, 3>(row_f32, x, out_row),
                        (3, 3) => horizontal_pass::<3, 3>(row_f32, x, out_row),
                        (4, 3) => horizontal_pass::<4, 3>(row_f32, x, out_row),
                        _ => horizontal_pass_any(row_f32, x, cn, out_row),
                    }
                    // Vertical pass of every destination row whose last source row this is.
                    while next_dy < self.dst_h && y.first[next_dy] + y.weights[next_dy].len() - 1 == sy {
                        let first = y.first[next_dy];
                        let slot = |k: usize| (first + k) % ring;
                        let out = &mut dst[next_dy * width..(next_dy + 1) * width];
                        vertical_row(&y.weights[next_dy], |k| &rows[slot(k) * width..(slot(k) + 1) * width], sum, out);
                        next_dy += 1;
                    }
                }
            }
            Method::Linear { xofs, xw, yofs, yw, rows } => {
                let last_x = src_w - 1;
                let width = dst_w * cn;
                for dy in 0..self.dst_h {
                    for (k, row) in rows.iter_mut().enumerate() {
                        let sy = (yofs[dy] + k).min(self.src_h - 1);
                        let src_row = &src[sy * src_w * cn..(sy + 1) * src_w * cn];
                        for dx in 0..dst_w {
                            let (s0, s1) = (xofs[dx], (xofs[dx] + 1).min(last_x));
                            let [a0, a1] = xw[dx];
                            for c in 0..cn {
                                row[dx * cn + c] = src_row[s0 * cn + c] as i32 * a0 + src_row[s1 * cn + c] as i32 * a1;
                            }
                        }
                    }
                    let [b0, b1] = yw[dy];
                    let out = &mut dst[dy * width..(dy + 1) * width];
                    for (i, o) in out.iter_mut().enumerate() {
                        let v = (rows[0][i] as i64 * b0 as i64 + rows[1][i] as i64 * b1 as i64 + (1 << 21)) >> 22;
                        *o = v.clamp(0, 255) as u8;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_when_sizes_match() {
        let mut r = Resizer::new(2, 3, 2, 3, 1);
        let mut out = [0u8; 6];
        r.resize(&[1, 2, 3, 4, 5, 6], &mut out);
        assert_eq!(out, [1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn integer_downscale_averages_blocks() {
        let mut r = Resizer::new(2, 4, 1, 2, 1);
        let mut out = [0u8; 2];
        r.resize(&[0, 2, 10, 10, 4, 6, 20, 21], &mut out);
        assert_eq!(out, [3, 15]); // (0+2+4+6)/4 = 3, (10+10+20+21)/4 = 15.25
    }

    #[test]
    fn area_resize_preserves_constant_images_and_mean() {
        let mut r = Resizer::new(210, 160, 84, 84, 3);
        let src = vec![77u8; 210 * 160 * 3];
        let mut out = vec![0u8; 84 * 84 * 3];
        r.resize(&src, &mut out);
        assert!(out.iter().all(|&v| v == 77));
        let src: Vec<u8> = (0..210 * 160).map(|i| ((i % 160) * 255 / 159) as u8).collect();
        let mut gray = Resizer::new(210, 160, 84, 84, 1);
        let mut out = vec![0u8; 84 * 84];
        gray.resize(&src, &mut out);
        // A horizontal ramp stays a monotone ramp.
        for row in out.chunks(84) {
            assert!(row.windows(2).all(|w| w[0] <= w[1]), "{row:?}");
            assert!(row[0] < 5 && row[83] > 250);
        }
    }

    #[test]
    fn multi_row_passes_match_the_one_row_pass_bit_for_bit() {
        // Gray and RGB images take the multi-row pass; 2-channel ones the one-row pass. A 2-channel
        // image whose channels equal a gray image must give that gray result in both channels, and
        // an RGB image with the gray image in every channel the same in all three.
        for (h, w, dh, dw) in [(210, 160, 84, 84), (210, 160, 64, 48), (13, 29, 5, 11), (250, 160, 84, 84)] {
            let gray: Vec<u8> = (0..h * w).map(|i| ((i * 7919 + i / w * 31) % 256) as u8).collect();
            let two: Vec<u8> = gray.iter().flat_map(|&v| [v, v]).collect();
            let rgb: Vec<u8> = gray.iter().flat_map(|&v| [v, v, v]).collect();
            let mut out_two = vec![0u8; dh * dw * 2];
            Resizer::new(h, w, dh, dw, 2).resize(&two, &mut out_two);
            let (mut out_gray, mut out_rgb) = (vec![0u8; dh * dw], vec![0u8; dh * dw * 3]);
            Resizer::new(h, w, dh, dw, 1).resize(&gray, &mut out_gray);
            Resizer::new(h, w, dh, dw, 3).resize(&rgb, &mut out_rgb);
            for (i, px) in out_two.chunks_exact(2).enumerate() {
                assert_eq!(px, [out_gray[i]; 2], "{h}x{w} -> {dh}x{dw}, pixel {i}");
                assert_eq!(out_rgb[i * 3..i * 3 + 3], [out_gray[i]; 3], "{h}x{w} -> {dh}x{dw}, pixel {i}");
            }
        }
    }

    #[test]
    fn resizing_changed_rows_matches_a_full_resize() {
        for channels in [1, 3] {
            resize_changed_rows_matches_a_full_resize(channels);
        }
    }

    fn resize_changed_rows_matches_a_full_resize(channels: usize) {
        let (h, w) = (210, 160 * channels);
        let mut incremental = Resizer::new(h, 160, 84, 84, channels);
        let mut image: Vec<u8> = (0..h * w).map(|i| (i * 31 % 251) as u8).collect();
        let mut out = vec![0u8; 84 * 84 * channels];
        incremental.resize_changed_rows(&image, None, &mut out);
        let mut state = 12345u64;
        for round in 0..40 {
            // Change a few rows (some at the edges of 8-row groups, some not at all in a round).
            let mut changed = vec![false; h];
            for _ in 0..round % 5 {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let row = (state >> 33) as usize % h;
                changed[row] = true;
                for v in &mut image[row * w..(row + 1) * w] {
                    *v = v.wrapping_add((state >> 20) as u8 | 1);
                }
            }
            incremental.resize_changed_rows(&image, Some(&changed), &mut out);
            let mut expected = vec![0u8; 84 * 84 * channels];
            Resizer::new(h, 160, 84, 84, channels).resize(&image, &mut expected);
            assert_eq!(out, expected, "{channels} channels, round {round}");
        }
    }

    #[test]
    fn upscale_interpolates_between_neighbours() {
        let mut r = Resizer::new(1, 2, 1, 4, 1);
        let mut out = [0u8; 4];
        r.resize(&[0, 100], &mut out);
        assert_eq!(out, [0, 25, 75, 100]);
    }
}
