//! One feature's training values read in increasing order by rank, for the quantile fit: a
//! sorted slice, or a column grouped into value buckets by its order keys (the bits of a float
//! as an unsigned integer of the same order) and sorted one bucket at a time, when needed.

/// Read access to one feature's training values in increasing order, by rank. The quantile
/// fit reads a few hundred ranks of a column of millions of values, so an implementation
/// need not sort the whole column (see [`Bucketed`]).
pub(super) trait OrderedValues {
    fn len(&self) -> usize;
    /// The value of rank `i`.
    fn at(&mut self, i: usize) -> f64;
    /// The ranks `start..end` of the run of values equal to the value of rank `i` (with
    /// -0.0 equal to 0.0, as f64 comparison has them).
    fn run_of(&mut self, i: usize) -> (usize, usize);
    /// The first value of every run of equal values, in increasing order, when there are at
    /// most `k` runs; `None` when there are more.
    fn run_firsts_up_to(&mut self, k: usize) -> Option<Vec<f64>>;
}

pub(super) struct SortedSlice<'a>(pub(super) &'a [f64]);

impl OrderedValues for SortedSlice<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn at(&mut self, i: usize) -> f64 {
        self.0[i]
    }
    fn run_of(&mut self, i: usize) -> (usize, usize) {
        let v = self.0[i];
        (
            self.0.partition_point(|&u| u < v),
            self.0.partition_point(|&u| u <= v),
        )
    }
    fn run_firsts_up_to(&mut self, k: usize) -> Option<Vec<f64>> {
        run_firsts(self.0.iter().copied(), k)
    }
}

/// The first value of every run of equal values of an increasing sequence, or `None` when
/// there are more than `k` runs (stopping there).
fn run_firsts(values: impl Iterator<Item = f64>, k: usize) -> Option<Vec<f64>> {
    let mut out: Vec<f64> = Vec::new();
    for v in values {
        if out.last() != Some(&v) {
            if out.len() == k {
                return None;
            }
            out.push(v);
        }
    }
    Some(out)
}

/// The bits of a non-NaN float as an unsigned integer of the same order (-0.0 before 0.0, as
/// f64::total_cmp orders them): the sign bit is flipped for positive values and every bit for
/// negative ones.
#[inline]
fn order_key(v: f64) -> u64 {
    // Branch-free: the mask is all ones for a negative value and the sign bit otherwise (a
    // branch on the sign is mispredicted on every other value of a symmetric feature).
    let b = v.to_bits();
    b ^ ((((b as i64) >> 63) as u64) | (1 << 63))
}

#[inline]
fn from_order_key(k: u64) -> f64 {
    f64::from_bits(k ^ (((!k as i64 >> 63) as u64) | (1 << 63)))
}

/// The bits of a non-NaN f32 as an unsigned integer of the same order (see `order_key`).
#[inline]
fn order_key32(v: f32) -> u32 {
    let b = v.to_bits();
    b ^ ((((b as i32) >> 31) as u32) | (1 << 31))
}

#[inline]
fn from_order_key32(k: u32) -> f32 {
    f32::from_bits(k ^ (((!k as i32 >> 31) as u32) | (1 << 31)))
}

/// Order keys of one float type (`order_key32` of f32 values, `order_key` of f64 values).
pub(super) trait OrderKey: Copy + Ord + Default + Send {
    /// The key written for NaN, above the key of every number (and never `of` a number).
    const NAN: Self;
    fn of(v: f64) -> Self;
    fn value(self) -> f64;
    /// A bucket among `BUCKETS`, non-decreasing in the value: the top 16 bits of the value's
    /// f32 order key, with -0.0 taken as 0.0 so that a run of equal values (zeros of either
    /// sign included) lies in one bucket.
    fn bucket(self) -> usize;
}

/// Number of buckets of [`OrderKey::bucket`]: 8 exponent and 7 mantissa bits of an f32, so a
/// bucket spans under 1% of its values' magnitude.
pub(super) const BUCKETS: usize = 1 << 16;

/// `order_key32(-0.0)`.
const NEGATIVE_ZERO_KEY32: u32 = 0x7FFF_FFFF;

#[inline]
fn bucket_of_f32(v: f32) -> usize {
    // Adding 0.0 turns -0.0 into 0.0 and leaves every other value unchanged.
    (order_key32(v + 0.0) >> 16) as usize
}

impl OrderKey for u32 {
    const NAN: Self = u32::MAX;
    #[inline]
    fn of(v: f64) -> Self {
        order_key32(v as f32)
    }
    #[inline]
    fn value(self) -> f64 {
        f64::from(from_order_key32(self))
    }
    #[inline]
    fn bucket(self) -> usize {
        // -0.0 has the key just below 0.0's; moved up to it, as `bucket_of_f32` does.
        ((self + u32::from(self == NEGATIVE_ZERO_KEY32)) >> 16) as usize
    }
}

impl OrderKey for u64 {
    const NAN: Self = u64::MAX;
    #[inline]
    fn of(v: f64) -> Self {
        order_key(v)
    }
    #[inline]
    fn value(self) -> f64 {
        from_order_key(self)
    }
    #[inline]
    fn bucket(self) -> usize {
        // Rounding to f32 is monotone, so buckets are ordered as the f64 values.
        bucket_of_f32(from_order_key(self) as f32)
    }
}

/// One column's values grouped into [`BUCKETS`] value ranges by a counting sort, each range
/// sorted only when a rank inside it is read. Two passes over the column and a sort of the few
/// buckets that hold the quantile fit's cuts, where a full sort of millions of values is
/// several passes (`Binner.fit` on the MSLR-WEB30K shape spent most of its time sorting).
/// A column whose values fall into only a few buckets is sorted in full when the fit needs
/// every run of equal values.
pub(super) struct Bucketed<'a, K> {
    pub(super) keys: &'a mut [K],
    /// `starts[b]..starts[b + 1]` are the ranks of bucket `b`.
    pub(super) starts: &'a [usize],
    pub(super) sorted: &'a mut [bool],
    /// The buckets that hold at least one value, in increasing order.
    pub(super) non_empty: &'a [usize],
}

impl<K: OrderKey> Bucketed<'_, K> {
    fn bucket_of_rank(&self, i: usize) -> usize {
        // The last bucket starting at or before rank i; empty buckets start where the next
        // one does, so it is the one that holds rank i.
        self.starts.partition_point(|&s| s <= i) - 1
    }

    fn sorted_bucket(&mut self, b: usize) -> (usize, &[K]) {
        let (lo, hi) = (self.starts[b], self.starts[b + 1]);
        if !self.sorted[b] {
            self.keys[lo..hi].sort_unstable();
            self.sorted[b] = true;
        }
        (lo, &self.keys[lo..hi])
    }
}

impl<K: OrderKey> OrderedValues for Bucketed<'_, K> {
    fn len(&self) -> usize {
        self.keys.len()
    }
    fn at(&mut self, i: usize) -> f64 {
        let b = self.bucket_of_rank(i);
        let (lo, keys) = self.sorted_bucket(b);
        keys[i - lo].value()
    }
    fn run_of(&mut self, i: usize) -> (usize, usize) {
        let v = self.at(i);
        let b = self.bucket_of_rank(i);
        let (lo, keys) = self.sorted_bucket(b);
        (
            lo + keys.partition_point(|k| k.value() < v),
            lo + keys.partition_point(|k| k.value() <= v),
        )
    }
    fn run_firsts_up_to(&mut self, k: usize) -> Option<Vec<f64>> {
        // Each run lies in one bucket, so more non-empty buckets than k means more runs.
        if self.non_empty.len() > k {
            return None;
        }
        for i in 0..self.non_empty.len() {
            self.sorted_bucket(self.non_empty[i]);
        }
        run_firsts(self.keys.iter().map(|k| k.value()), k)
    }
}
