//! What a read takes (`ReadOptions`) and gives (`LetorData`, values of a `FromF64` type).

/// The largest feature index accepted, so that column indices fit scipy's int32 and an absurd
/// index is reported instead of allocated.
pub const MAX_FEATURE_INDEX: u64 = i32::MAX as u64;

#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Expected number of features; an index above it is an error. None: the largest index.
    pub n_features: Option<usize>,
    /// Keep the text after '#' of every data line.
    pub keep_comments: bool,
    /// Read a feature value `NULL` as NaN instead of refusing it.
    pub missing_nan: bool,
    /// Lines have no `qid:` field (LightGBM's layout); a line with one is an error.
    pub without_qid: bool,
}

/// A parsed file in CSR form, rows in file order.
#[derive(Debug, Clone, Default)]
pub struct LetorData<T> {
    pub labels: Vec<f64>,
    /// Index into `qid_names` for every row.
    pub qid_codes: Vec<u32>,
    /// Distinct query ids in order of first appearance.
    pub qid_names: Vec<String>,
    pub indptr: Vec<i64>,
    /// 0-based column indices.
    pub indices: Vec<i32>,
    pub values: Vec<T>,
    pub n_features: usize,
    /// The 1-based line number of every row.
    pub line_numbers: Vec<u64>,
    pub comments: Option<Vec<String>>,
}

impl<T> LetorData<T> {
    pub fn n_rows(&self) -> usize {
        self.labels.len()
    }

    /// True when every row lists exactly features 1..n_features in order, so that `values`
    /// already is the dense row-major matrix.
    pub fn is_dense_complete(&self) -> bool {
        let d = self.n_features;
        self.values.len() == self.n_rows() * d
            && self
                .indices
                .chunks(d.max(1))
                .all(|row| row.iter().enumerate().all(|(j, &i)| i as usize == j))
    }
}

/// Value types the reader can produce.
pub trait FromF64: Copy + Send + Sync + Default + 'static {
    fn from_f64(v: f64) -> Self;
    /// Whether `v` (finite) stays finite in this type.
    fn fits(_v: f64) -> bool {
        true
    }
}
impl FromF64 for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
}
impl FromF64 for f32 {
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn fits(v: f64) -> bool {
        (v as f32).is_finite()
    }
}
