//! The thresholds of a binning (`Thresholds`) and its two choices, how thresholds are placed
//! (`Strategy`) and what a NaN value means (`Missing`), with their names, parsing and
//! validation. Everything else about bins reads them from here; `config` gathers them with the
//! number of thresholds and the output into a binner's configuration.

use crate::error::{Error, Result};

/// What a choice of names accepts, as the Python API words it: "one of ('a', 'b')".
pub(crate) fn one_of(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    format!("one of ({})", quoted.join(", "))
}

/// How thresholds are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Equal-frequency bins over the training values (the default): where many documents have
    /// nearly the same value, thresholds are dense; where values are sparse, they are far apart.
    Quantile,
    /// Evenly spaced thresholds strictly between the smallest and largest training value.
    Uniform,
}

impl Strategy {
    /// The names of the variants, in declaration order.
    pub const NAMES: [&'static str; 2] = ["quantile", "uniform"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "quantile" => Ok(Strategy::Quantile),
            "uniform" => Ok(Strategy::Uniform),
            other => Err(Error::param(
                "strategy",
                &one_of(&Self::NAMES),
                format!("{other:?}"),
            )),
        }
    }
}

/// What a NaN feature value means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// NaN is an error.
    Error,
    /// NaN marks a missing value, encoded by one extra indicator column per base feature.
    Indicator,
}

impl Missing {
    /// The names of the variants, in declaration order.
    pub const NAMES: [&'static str; 2] = ["error", "indicator"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "error" => Ok(Missing::Error),
            "indicator" => Ok(Missing::Indicator),
            other => Err(Error::param(
                "missing",
                &one_of(&Self::NAMES),
                format!("{other:?}"),
            )),
        }
    }

    fn extra_columns(self) -> usize {
        match self {
            Missing::Error => 0,
            Missing::Indicator => 1,
        }
    }
}

/// The thresholds of every base feature, concatenated: feature j owns
/// `values[offsets[j]..offsets[j + 1]]`, sorted increasingly without duplicates.
#[derive(Debug, Clone, PartialEq)]
pub struct Thresholds {
    pub values: Vec<f64>,
    pub offsets: Vec<usize>,
}

impl Thresholds {
    /// Checks that the arrays describe sorted, finite, duplicate-free thresholds per feature.
    pub fn new(values: Vec<f64>, offsets: Vec<usize>) -> Result<Self> {
        if offsets.first() != Some(&0) || offsets.last() != Some(&values.len()) {
            return Err(Error::input(format!(
                "threshold offsets must run from 0 to the number of thresholds ({}), got {:?}..{:?}",
                values.len(),
                offsets.first(),
                offsets.last()
            )));
        }
        for (j, w) in offsets.windows(2).enumerate() {
            if w[0] > w[1] {
                return Err(Error::input(format!(
                    "threshold offsets must not decrease (feature {j}: {} then {})",
                    w[0], w[1]
                )));
            }
            let k = &values[w[0]..w[1]];
            if let Some(i) = k.iter().position(|v| !v.is_finite()) {
                return Err(Error::input(format!(
                    "threshold {i} of feature {j} is {}: thresholds must be finite",
                    k[i]
                )));
            }
            if let Some(i) = k.windows(2).position(|p| p[0] >= p[1]) {
                return Err(Error::input(format!(
                    "thresholds of feature {j} must increase strictly, got {} then {}",
                    k[i],
                    k[i + 1]
                )));
            }
        }
        Ok(Thresholds { values, offsets })
    }

    pub fn n_features(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn feature(&self, j: usize) -> &[f64] {
        &self.values[self.offsets[j]..self.offsets[j + 1]]
    }

    /// Number of output columns, and the first column of every feature's block.
    pub fn columns(&self, missing: Missing) -> (usize, Vec<usize>) {
        let extra = missing.extra_columns();
        let starts: Vec<usize> = (0..self.n_features())
            .map(|j| self.offsets[j] + j * extra)
            .collect();
        (self.values.len() + self.n_features() * extra, starts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_thresholds_are_rejected() {
        assert!(Thresholds::new(vec![1.0, 1.0], vec![0, 2]).is_err());
        assert!(Thresholds::new(vec![1.0], vec![0, 2]).is_err());
        assert!(Thresholds::new(vec![f64::INFINITY], vec![0, 1]).is_err());
    }
}
