//! The configuration of a binning (`BinnerConfig`): how many thresholds per feature, how they
//! are placed, what NaN means and what the transform returns, with its defaults and its one
//! validation. The Python `Binner`, its Dask twin and the model file reader all read their
//! defaults from here and check their parameters through it.

use super::thresholds::{one_of, Missing, Strategy};
use crate::error::{Error, Result};

/// The most thresholds a feature may have: the counters of a fit hold 32 bits (the memory a
/// count needs is checked when fitting, against the machine).
pub const MAX_THRESHOLDS: usize = u32::MAX as usize;

/// What the transform returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// One bin code per value (the default): the same model as the indicators, in far less
    /// memory.
    Codes,
    /// The indicator features 1[f > k] as a sparse matrix, for other estimators.
    Indicators,
}

impl Output {
    pub const NAMES: [&'static str; 2] = ["codes", "indicators"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "codes" => Ok(Output::Codes),
            "indicators" => Ok(Output::Indicators),
            other => Err(Error::param(
                "output",
                &one_of(&Self::NAMES),
                format!("{other:?}"),
            )),
        }
    }
}

/// Everything that decides a binning besides the data. `Default` holds the defaults of every
/// binner (Yue et al. use 50 thresholds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BinnerConfig {
    pub n_thresholds: usize,
    pub strategy: Strategy,
    pub missing: Missing,
    pub output: Output,
}

impl Default for BinnerConfig {
    fn default() -> Self {
        BinnerConfig {
            n_thresholds: 50,
            strategy: Strategy::Quantile,
            missing: Missing::Error,
            output: Output::Codes,
        }
    }
}

impl BinnerConfig {
    /// Checks what the types do not: the number of thresholds is 1 to `MAX_THRESHOLDS`. The
    /// words of the error are the ones users see.
    pub fn validate(&self) -> Result<()> {
        let n = self.n_thresholds;
        if n == 0 {
            return Err(Error::param("n_thresholds", "an integer >= 1", n));
        }
        if n > MAX_THRESHOLDS {
            return Err(Error::param(
                "n_thresholds",
                &format!("an integer >= 1 and at most {MAX_THRESHOLDS}"),
                n,
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_valid_and_the_bounds_are_checked() {
        let ok = BinnerConfig::default();
        assert!(ok.validate().is_ok());
        for n in [0, MAX_THRESHOLDS + 1] {
            let bad = BinnerConfig {
                n_thresholds: n,
                ..ok
            };
            assert!(matches!(
                bad.validate(),
                Err(Error::InvalidParameter { name, .. }) if name == "n_thresholds"
            ));
        }
        let most = BinnerConfig {
            n_thresholds: MAX_THRESHOLDS,
            ..ok
        };
        assert!(most.validate().is_ok());
    }

    #[test]
    fn names_parse_back() {
        for name in Output::NAMES {
            assert_eq!(Output::parse(name).unwrap().name(), name);
        }
        for name in Strategy::NAMES {
            assert_eq!(Strategy::parse(name).unwrap().name(), name);
        }
        for name in Missing::NAMES {
            assert_eq!(Missing::parse(name).unwrap().name(), name);
        }
        assert!(Strategy::parse("kmeans").is_err());
    }
}
