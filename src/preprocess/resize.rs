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

/// One source index contributing to one destination index with a weight.
#[derive(Clone, Copy, Debug)]
struct AreaTap {
    dst: usize,
    src: usize,
    weight: f32,
}

enum Method {
    Copy,
    AreaFast { scale_x: usize, scale_y: usize },
    Area { xtab: Vec<AreaTap>, ytab: Vec<AreaTap>, row: Vec<f32>, sum: Vec<f32> },
    Linear { xofs: Vec<usize>, xw: Vec<[i32; 2]>, yofs: Vec<usize>, yw: Vec<[i32; 2]>, rows: [Vec<i32>; 2] },
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
fn area_table(src_size: usize, dst_size: usize, channels: usize, scale: f64) -> Vec<AreaTap> {
    let mut taps = Vec::with_capacity(src_size * 2);
    for dx in 0..dst_size {
        let fsx1 = dx as f64 * scale;
        let fsx2 = fsx1 + scale;
        let cell_width = scale.min(src_size as f64 - fsx1);
        let mut sx2 = fsx2.floor() as i64;
        let mut sx1 = fsx1.ceil() as i64;
        sx2 = sx2.min(src_size as i64 - 1);
        sx1 = sx1.min(sx2);
        if sx1 as f64 - fsx1 > 1e-3 {
            taps.push(AreaTap {
                dst: dx * channels,
                src: (sx1 - 1) as usize * channels,
                weight: ((sx1 as f64 - fsx1) / cell_width) as f32,
            });
        }
        for sx in sx1..sx2 {
            taps.push(AreaTap { dst: dx * channels, src: sx as usize * channels, weight: (1.0 / cell_width) as f32 });
        }
        if fsx2 - sx2 as f64 > 1e-3 {
            taps.push(AreaTap {
                dst: dx * channels,
                src: sx2 as usize * channels,
                weight: ((fsx2 - sx2 as f64).min(1.0).min(cell_width) / cell_width) as f32,
            });
        }
    }
    taps
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

/// OpenCV's `saturate_cast<uchar>(float)`: round half to even, then clamp.
fn saturate_u8(value: f32) -> u8 {
    value.round_ties_even().clamp(0.0, 255.0) as u8
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
                Method::Area {
                    xtab: area_table(src_w, dst_w, channels, scale_x),
                    ytab: area_table(src_h, dst_h, 1, scale_y),
                    row: vec![0.0; dst_w * channels],
                    sum: vec![0.0; dst_w * channels],
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
            Method::Area { xtab, ytab, row, sum } => {
                let width = dst_w * cn;
                sum.fill(0.0);
                let mut prev_dy = ytab[0].dst;
                for ytap in ytab.iter() {
                    let src_row = &src[ytap.src * src_w * cn..(ytap.src + 1) * src_w * cn];
                    row.fill(0.0);
                    for tap in xtab.iter() {
                        for c in 0..cn {
                            row[tap.dst + c] += src_row[tap.src + c] as f32 * tap.weight;
                        }
                    }
                    let beta = ytap.weight;
                    if ytap.dst != prev_dy {
                        let out = &mut dst[prev_dy * width..(prev_dy + 1) * width];
                        for ((o, s), r) in out.iter_mut().zip(sum.iter_mut()).zip(row.iter()) {
                            *o = saturate_u8(*s);
                            *s = beta * r;
                        }
                        prev_dy = ytap.dst;
                    } else {
                        for (s, r) in sum.iter_mut().zip(row.iter()) {
                            *s += beta * r;
                        }
                    }
                }
                let out = &mut dst[prev_dy * width..(prev_dy + 1) * width];
                for (o, s) in out.iter_mut().zip(sum.iter()) {
                    *o = saturate_u8(*s);
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
    fn upscale_interpolates_between_neighbours() {
        let mut r = Resizer::new(1, 2, 1, 4, 1);
        let mut out = [0u8; 4];
        r.resize(&[0, 100], &mut out);
        assert_eq!(out, [0, 25, 75, 100]);
    }
}
