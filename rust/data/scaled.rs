//! A matrix read with its columns centered and scaled, (x_j - center_j) * scale_j, without a
//! copy: what a StandardScaler fitted on some rows would give, for a model trained on the
//! original matrix (SVMMapCV's "standard" preprocessing, whose statistics differ per split).
//!
//! Scores are (w * scale) . x - (w * scale) . center, so `prepare` scales w once per w and
//! the inner matrix scores its rows as usual. Sums of rows weighted by alpha are
//! sum_r alpha_r (x_r - center) * scale = (sum_r alpha_r x_r - (sum_r alpha_r) center) * scale:
//! the inner matrix accumulates in its own space, one more slot sums the alphas, and `finish`
//! applies the centering and the scale once. Results equal those of the transformed copy up
//! to rounding (the products are associated differently).

use crate::data::matrix::RowMatrix;
use crate::error::{Error, Result};

/// `inner` with column j read as (x_j - center_j) * scale_j (`center` empty: no centering).
pub struct ScaledView<'a, M: RowMatrix + ?Sized> {
    inner: &'a M,
    center: &'a [f64],
    scale: &'a [f64],
}

impl<'a, M: RowMatrix + ?Sized> ScaledView<'a, M> {
    /// Checks that `scale` (and `center`, unless empty) has one finite value per column.
    pub fn new(inner: &'a M, center: &'a [f64], scale: &'a [f64]) -> Result<Self> {
        let d = inner.n_cols();
        if scale.len() != d || !(center.is_empty() || center.len() == d) {
            return Err(Error::input(format!(
                "column scales need {d} values (and centers none or {d}), got {} and {}",
                scale.len(),
                center.len()
            )));
        }
        if scale.iter().chain(center).any(|v| !v.is_finite()) {
            return Err(Error::input("column scales and centers must be finite"));
        }
        Ok(ScaledView {
            inner,
            center,
            scale,
        })
    }

    fn d(&self) -> usize {
        self.inner.n_cols()
    }
}

impl<M: RowMatrix + ?Sized> RowMatrix for ScaledView<'_, M> {
    fn n_rows(&self) -> usize {
        self.inner.n_rows()
    }
    fn n_cols(&self) -> usize {
        self.d()
    }
    fn row_dot(&self, row: usize, w: &[f64]) -> f64 {
        let prepared = self.prepare(w);
        self.row_score(row, w, &prepared)
    }
    fn row_axpy(&self, row: usize, alpha: f64, out: &mut [f64]) {
        let mut acc = vec![0.0; self.acc_len()];
        self.row_accumulate(row, alpha, &mut acc);
        for (o, v) in out.iter_mut().zip(self.finish(acc)) {
            *o += v;
        }
    }
    /// [the offset (w * scale) . center, w * scale, the inner matrix's preparation of it].
    fn prepare(&self, w: &[f64]) -> Vec<f64> {
        let scaled: Vec<f64> = w.iter().zip(self.scale).map(|(a, s)| a * s).collect();
        let offset: f64 = scaled.iter().zip(self.center).map(|(a, c)| a * c).sum();
        let inner = self.inner.prepare(&scaled);
        let mut out = Vec::with_capacity(1 + scaled.len() + inner.len());
        out.push(offset);
        out.extend(scaled);
        out.extend(inner);
        out
    }
    #[inline]
    fn row_score(&self, row: usize, _w: &[f64], prepared: &[f64]) -> f64 {
        let d = self.d();
        let (scaled, inner) = prepared[1..].split_at(d);
        self.inner.row_score(row, scaled, inner) - prepared[0]
    }
    /// The inner accumulator and one more slot for the sum of the alphas.
    fn acc_len(&self) -> usize {
        self.inner.acc_len() + 1
    }
    #[inline]
    fn row_accumulate(&self, row: usize, alpha: f64, acc: &mut [f64]) {
        let (inner, total) = acc.split_at_mut(acc.len() - 1);
        self.inner.row_accumulate(row, alpha, inner);
        total[0] += alpha;
    }
    fn accumulate_rows(&self, rows: &[usize], alphas: &[f64], acc: &mut [f64]) {
        let (inner, total) = acc.split_at_mut(acc.len() - 1);
        self.inner.accumulate_rows(rows, alphas, inner);
        for a in alphas {
            total[0] += a;
        }
    }
    fn finish(&self, mut acc: Vec<f64>) -> Vec<f64> {
        let total = acc.pop().unwrap_or(0.0);
        let mut g = self.inner.finish(acc);
        for (j, (v, s)) in g.iter_mut().zip(self.scale).enumerate() {
            let centered = match self.center.get(j) {
                Some(c) => *v - total * c,
                None => *v,
            };
            *v = centered * s;
        }
        g
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::kernels::{matvec, transpose_dot};
    use crate::data::DenseView;

    /// Scores and X^T v of the view equal those of the centered and scaled copy (by hand:
    /// column 0 centered at 1 and scaled by 2, column 1 at -1 and by 0.5).
    #[test]
    fn the_view_reads_the_centered_and_scaled_columns() {
        let data = [1.0, 3.0, 2.0, -1.0, 4.0, 1.0];
        let x = DenseView::new(&data, 3, 2).unwrap();
        let (center, scale) = ([1.0, -1.0], [2.0, 0.5]);
        let view = ScaledView::new(&x, &center, &scale).unwrap();
        // The copy: rows (0, 2), (2, 0), (6, 1).
        let copy = [0.0, 2.0, 2.0, 0.0, 6.0, 1.0];
        let w = [0.5, -2.0];
        let mut scores = vec![0.0; 3];
        matvec(&view, &w, &mut scores);
        assert_eq!(scores, vec![-4.0, 1.0, 1.0]);
        let v = [1.0, -2.0, 0.5];
        let g = transpose_dot(&view, &v).unwrap();
        let want: Vec<f64> = (0..2)
            .map(|j| (0..3).map(|r| v[r] * copy[r * 2 + j]).sum())
            .collect();
        assert_eq!(g, want);
        let mut axpy = vec![1.0, 1.0];
        view.row_axpy(2, 2.0, &mut axpy);
        assert_eq!(axpy, vec![13.0, 3.0]);
        assert_eq!(view.row_dot(1, &w), 1.0);
        // Without centers, the scale alone.
        let scaled = ScaledView::new(&x, &[], &scale).unwrap();
        assert_eq!(scaled.row_dot(0, &w), 0.5 * 2.0 - 2.0 * 1.5);
        assert!(ScaledView::new(&x, &[], &[1.0]).is_err());
        assert!(ScaledView::new(&x, &[0.0, f64::NAN], &scale).is_err());
    }
}
