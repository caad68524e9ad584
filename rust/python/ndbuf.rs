//! NumPy arrays without NumPy's C API: read-only views of C-contiguous 1-D and 2-D arrays
//! through their array interface, and arrays made for the core's outputs.
//!
//! The `numpy` crate did this before; it and the crates it needs (`ndarray`, `matrixmultiply`,
//! `num-traits`, `num-complex`, `num-integer`) were on the critical path of `pip install .`
//! (CHANGELOG.md, "Unreleased"). pyo3's buffer-protocol API is not part of the limited API the
//! wheels are built for (abi3-py39), so the arrays are read through NumPy's array interface, in
//! its C form `__array_struct__`: a capsule holding the data pointer, the flags (C-contiguous,
//! aligned, in native byte order, writeable), the shape, the strides and the kind and size of
//! the elements. It tells the same as the dict `__array_interface__`, which costs twenty times
//! more to make (NumPy describes the dtype in Python for it): 21 against 1 microseconds per
//! array on the loaded 2-core machine this was written on, which made a call on a tiny array a
//! fifth slower.

use std::marker::PhantomData;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyCapsule;
use pyo3::types::{PyDict, PyTuple, PyType};
use std::ffi::{c_char, c_int, c_void};

/// The NumPy objects the bindings use, looked up once per process.
struct Numpy {
    ndarray: Py<PyType>,
    asarray: Py<PyAny>,
    empty: Py<PyAny>,
}

static NUMPY: PyOnceLock<Numpy> = PyOnceLock::new();

/// NumPy's `ndarray`, `asarray` and `empty`, importing NumPy on the first call. Every step is fallible:
/// an interrupt during the import is an exception here, and the next call tries again.
fn numpy(py: Python<'_>) -> PyResult<&Numpy> {
    NUMPY.get_or_try_init(py, || {
        let np = py.import("numpy")?;
        Ok(Numpy {
            ndarray: np.getattr("ndarray")?.cast_into::<PyType>()?.unbind(),
            asarray: np.getattr("asarray")?.unbind(),
            empty: np.getattr("empty")?.unbind(),
        })
    })
}

/// Looks NumPy's objects up now (see `super::set_up_numpy`).
pub(super) fn set_up(py: Python<'_>) -> PyResult<()> {
    numpy(py).map(drop)
}

/// Whether `set_up` (or a first array) has looked NumPy's objects up in this process.
pub(super) fn ready(py: Python<'_>) -> bool {
    NUMPY.get(py).is_some()
}

/// An element type the bindings read or make arrays of.
pub(super) trait Element: Copy + Send + Sync + 'static {
    /// The array interface's type string without its byte-order character, such as "f8".
    const CODE: &'static str;
    /// NumPy's name of the dtype, for errors.
    const NAME: &'static str;

    /// Whether every element's bytes are a valid value of the type: true for the numbers,
    /// whose every bit pattern is one.
    fn valid(_bytes: &[u8]) -> bool {
        true
    }
}

macro_rules! element {
    ($($t:ty => $code:literal, $name:literal;)*) => {$(
        impl Element for $t {
            const CODE: &'static str = $code;
            const NAME: &'static str = $name;
        }
    )*};
}

element! {
    f64 => "f8", "float64";
    f32 => "f4", "float32";
    u8 => "u1", "uint8";
    u16 => "u2", "uint16";
    i32 => "i4", "int32";
    i64 => "i8", "int64";
    u32 => "u4", "uint32";
    u64 => "u8", "uint64";
}

impl Element for bool {
    const CODE: &'static str = "b1";
    const NAME: &'static str = "bool";

    /// A NumPy bool array can hold other bytes than 0 and 1 (a uint8 array viewed as bool),
    /// which are not Rust `bool`s: such an array is refused rather than read.
    fn valid(bytes: &[u8]) -> bool {
        bytes.iter().all(|&b| b <= 1)
    }
}

/// The byte-order character of a native multi-byte type in a type string.
const NATIVE: char = if cfg!(target_endian = "little") {
    '<'
} else {
    '>'
};

/// NumPy's `PyArrayInterface`, the struct that `__array_struct__`'s capsule points to (its
/// layout is part of NumPy's documented array interface protocol, version 3).
#[repr(C)]
struct PyArrayInterface {
    two: c_int,
    nd: c_int,
    typekind: c_char,
    itemsize: c_int,
    flags: c_int,
    shape: *const isize,
    _strides: *const isize,
    data: *mut c_void,
    _descr: *mut pyo3::ffi::PyObject,
}

/// The flags of `PyArrayInterface` (NumPy's `NPY_ARRAY_*` values) that matter here.
const C_CONTIGUOUS: c_int = 0x0001;
const ALIGNED: c_int = 0x0100;
const NOTSWAPPED: c_int = 0x0200;

/// What an ndarray's array interface says about it.
pub(super) struct Interface {
    /// The address of the first element.
    data: usize,
    shape: Vec<usize>,
    /// Whether the elements are in C (row-major) order with no gaps (NumPy's flag).
    pub(super) c_contiguous: bool,
    /// Whether the data pointer is aligned for the elements (NumPy's flag).
    pub(super) aligned: bool,
    /// Whether the elements are in the machine's byte order.
    native: bool,
    /// The kind of the elements ('f', 'i', 'u', 'b', ...) and their size in bytes.
    kind: u8,
    itemsize: usize,
}

impl Interface {
    /// The interface of `obj`, or None when it is not a NumPy array (of any subclass).
    pub(super) fn of(obj: &Bound<'_, PyAny>) -> PyResult<Option<Interface>> {
        let py = obj.py();
        if !obj.is_instance(numpy(py)?.ndarray.bind(py))? {
            return Ok(None);
        }
        let capsule = obj.getattr(intern!(py, "__array_struct__"))?;
        let capsule = capsule.cast::<PyCapsule>()?;
        // SAFETY: NumPy's capsule has no name, and GetPointer with a null name returns its
        // pointer (or null with an exception set, handled below).
        let p = unsafe { pyo3::ffi::PyCapsule_GetPointer(capsule.as_ptr(), std::ptr::null()) };
        if p.is_null() {
            return Err(PyErr::fetch(py));
        }
        // SAFETY: an ndarray's __array_struct__ capsule points to a PyArrayInterface that
        // NumPy allocated for the capsule and frees with it; `capsule` holds it alive while it
        // is read here. `two` is checked before anything else is read, as the protocol says,
        // and `shape` points to `nd` values.
        let i = unsafe { &*(p as *const PyArrayInterface) };
        if i.two != 2 {
            return Err(PyValueError::new_err(
                "an array's __array_struct__ is not NumPy's array interface",
            ));
        }
        let nd = usize::try_from(i.nd).unwrap_or(0);
        let shape = if nd == 0 || i.shape.is_null() {
            Vec::new()
        } else {
            // SAFETY: see above; the values are dimensions, never negative.
            unsafe { std::slice::from_raw_parts(i.shape, nd) }
                .iter()
                .map(|&n| n as usize)
                .collect()
        };
        Ok(Some(Interface {
            data: i.data as usize,
            shape,
            c_contiguous: i.flags & C_CONTIGUOUS != 0,
            aligned: i.flags & ALIGNED != 0,
            native: i.flags & NOTSWAPPED != 0,
            kind: i.typekind as u8,
            itemsize: usize::try_from(i.itemsize).unwrap_or(0),
        }))
    }

    /// Whether the elements are `T`s in native byte order.
    fn is<T: Element>(&self) -> bool {
        self.kind == T::CODE.as_bytes()[0]
            && self.itemsize == std::mem::size_of::<T>()
            && (self.native || self.itemsize == 1)
    }
}

/// Why `ReadonlyArray::as_slice` refused.
#[derive(Debug)]
pub(super) enum SliceError {
    NotContiguous,
    Misaligned,
}

impl From<SliceError> for PyErr {
    fn from(e: SliceError) -> PyErr {
        PyValueError::new_err(match e {
            SliceError::NotContiguous => "the given array is not C-contiguous",
            SliceError::Misaligned => "the given array is not aligned",
        })
    }
}

/// An `N`-dimensional NumPy array of `T` borrowed for one call of the core.
pub(super) struct ReadonlyArray<'py, T, const N: usize> {
    /// Holds the array (and so its buffer) alive for the borrow's life: NumPy frees an array's
    /// memory only with the array, and refuses to resize one referenced from elsewhere.
    _array: Bound<'py, PyAny>,
    data: *const T,
    shape: [usize; N],
    c_contiguous: bool,
    aligned: bool,
    /// `as_slice` holds bytes checked to be valid `T`s (see `Element::valid`).
    valid: bool,
    _type: PhantomData<&'py [T]>,
}

pub(super) type PyReadonlyArray1<'py, T> = ReadonlyArray<'py, T, 1>;
pub(super) type PyReadonlyArray2<'py, T> = ReadonlyArray<'py, T, 2>;

impl<'py, T: Element, const N: usize> ReadonlyArray<'py, T, N> {
    /// Borrows `obj`, which must be an `N`-dimensional NumPy array of `T`: anything else is a
    /// `TypeError` naming what it is.
    pub(super) fn borrow(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        let wrong = |what: String| {
            PyTypeError::new_err(format!(
                "expected a {N}-D NumPy array of {}, got {what}",
                T::NAME
            ))
        };
        let Some(i) = Interface::of(obj)? else {
            let name = obj.get_type().name()?;
            return Err(wrong(format!("a {name} object")));
        };
        if i.shape.len() != N || !i.is::<T>() {
            let dtype = obj.getattr(intern!(obj.py(), "dtype"))?.str()?;
            return Err(wrong(format!("a {}-D array of {dtype}", i.shape.len())));
        }
        let mut shape = [0; N];
        shape.copy_from_slice(&i.shape);
        let aligned = i.aligned && i.data % std::mem::align_of::<T>() == 0;
        let mut array = ReadonlyArray {
            _array: obj.clone(),
            data: i.data as *const T,
            shape,
            c_contiguous: i.c_contiguous,
            aligned,
            valid: true,
            _type: PhantomData,
        };
        if array.c_contiguous && array.aligned && std::mem::size_of::<T>() == 1 {
            // SAFETY: one-byte elements, contiguous: the bytes are the elements' own, valid
            // to read as u8 for the reasons given in `as_slice`.
            let bytes = unsafe { std::slice::from_raw_parts(i.data as *const u8, array.len()) };
            array.valid = T::valid(bytes);
            if !array.valid {
                return Err(PyValueError::new_err(format!(
                    "a {} array holds bytes that are not {} values",
                    T::NAME,
                    T::NAME
                )));
            }
        }
        Ok(array)
    }

    fn len(&self) -> usize {
        self.shape.iter().product()
    }

    pub(super) fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The elements in C order.
    pub(super) fn as_slice(&self) -> Result<&[T], SliceError> {
        if !self.c_contiguous {
            return Err(SliceError::NotContiguous);
        }
        if !self.aligned {
            return Err(SliceError::Misaligned);
        }
        let len = self.len();
        if len == 0 {
            return Ok(&[]);
        }
        debug_assert!(self.valid);
        // SAFETY: the pointer is the array's data pointer, which its array interface gave, and
        // the array is held alive by `_array` for as long as the slice borrows `self`, so the
        // memory stays allocated. The elements are `T` in native byte order (the type string
        // was checked, and a one-byte type's bytes were checked to be valid values), C
        // contiguous (checked above: `len` elements with no gaps from the pointer) and aligned
        // for `T` (checked above). The core reads the slice only during the call and keeps no
        // reference to it after. As with the `numpy` crate before, Python code on another
        // thread could write to the array while the GIL is released; the core then reads
        // numbers that may change, never invalid memory (the arrays hold plain numbers).
        Ok(unsafe { std::slice::from_raw_parts(self.data, len) })
    }
}

impl<'a, 'py, T: Element, const N: usize> FromPyObject<'a, 'py> for ReadonlyArray<'py, T, N> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        ReadonlyArray::borrow(&obj.to_owned())
    }
}

/// An `N`-dimensional NumPy array of `T`, held between calls (by a `CoreMatrix`) and borrowed
/// for each.
pub(super) struct PyArray<T, const N: usize> {
    array: Py<PyAny>,
    _type: PhantomData<T>,
}

pub(super) type PyArray1<T> = PyArray<T, 1>;
pub(super) type PyArray2<T> = PyArray<T, 2>;

impl<T: Element, const N: usize> PyArray<T, N> {
    /// `obj` if it is an `N`-dimensional NumPy array of `T`.
    pub(super) fn of(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        ReadonlyArray::<T, N>::borrow(obj)?;
        Ok(PyArray {
            array: obj.clone().unbind(),
            _type: PhantomData,
        })
    }

    /// The array borrowed for one call. Its type and shape are read again, since both can be
    /// set in place (`a.shape = ...`, `a.dtype = ...`) after it was stored.
    pub(super) fn readonly<'py>(&self, py: Python<'py>) -> PyResult<ReadonlyArray<'py, T, N>> {
        ReadonlyArray::borrow(self.array.bind(py))
    }

    pub(super) fn bind<'py>(&self, py: Python<'py>) -> &Bound<'py, PyAny> {
        self.array.bind(py)
    }
}

/// The memory of an array made by `from_vec`: the `Vec` itself, which NumPy reads through this
/// object's array interface and keeps alive as the array's base.
#[pyclass(module = "svmmap._core", frozen)]
struct VecBuffer {
    /// Owns the elements; never read or changed after construction, so its heap block (at
    /// `data`) stays where it is for the object's life.
    _vec: Box<dyn Send + Sync>,
    data: usize,
    shape: Vec<usize>,
    typestr: String,
}

#[pymethods]
impl VecBuffer {
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("version", 3)?;
        d.set_item("shape", PyTuple::new(py, &self.shape)?)?;
        d.set_item("typestr", &self.typestr)?;
        // Writable, as arrays made by NumPy are: the buffer belongs to the array alone.
        d.set_item("data", (self.data, false))?;
        d.set_item("strides", py.None())?;
        Ok(d)
    }
}

/// Outputs up to this many bytes are copied into an array NumPy makes (`numpy.empty`), which
/// costs less than NumPy reading `VecBuffer`'s array interface; larger ones are not copied.
const COPY_BYTES: usize = 1 << 16;

/// A 1-D NumPy array holding `v`'s elements. A large output (bin codes, scores) is never in
/// memory twice: its array's memory is the `Vec`'s, freed with the array; a small one is copied
/// into a new array and the `Vec` dropped.
pub(super) fn from_vec<T: Element>(py: Python<'_>, v: Vec<T>) -> PyResult<Bound<'_, PyAny>> {
    let n = v.len();
    from_vec_shaped(py, v, &[n])
}

/// `from_vec` as an array of `shape` (in C order), whose product must be `v.len()`.
pub(super) fn from_vec_shaped<'py, T: Element>(
    py: Python<'py>,
    v: Vec<T>,
    shape: &[usize],
) -> PyResult<Bound<'py, PyAny>> {
    if shape.iter().try_fold(1usize, |a, &n| a.checked_mul(n)) != Some(v.len()) {
        return Err(PyValueError::new_err(format!(
            "{} values cannot fill an array of shape {shape:?}",
            v.len()
        )));
    }
    if std::mem::size_of_val(v.as_slice()) <= COPY_BYTES {
        return copied(py, &v, shape);
    }
    let order = if std::mem::size_of::<T>() == 1 {
        '|'
    } else {
        NATIVE
    };
    let buffer = VecBuffer {
        data: v.as_ptr() as usize,
        _vec: Box::new(v),
        shape: shape.to_vec(),
        typestr: format!("{order}{}", T::CODE),
    };
    let buffer = Bound::new(py, buffer)?;
    numpy(py)?.asarray.bind(py).call1((buffer,))
}

/// A new NumPy array of `shape` holding a copy of `s` (whose length is the shape's product).
fn copied<'py, T: Element>(
    py: Python<'py>,
    s: &[T],
    shape: &[usize],
) -> PyResult<Bound<'py, PyAny>> {
    let array = numpy(py)?
        .empty
        .bind(py)
        .call1((PyTuple::new(py, shape)?, T::NAME))?;
    let i = Interface::of(&array)?
        .filter(|i| i.is::<T>() && i.c_contiguous && i.aligned && i.shape == shape)
        .ok_or_else(|| PyValueError::new_err("numpy.empty made an array of another kind"))?;
    if !s.is_empty() {
        // SAFETY: `array` is a new C-contiguous, aligned array of `T` of this shape (checked
        // just above), so its buffer holds `s.len()` elements; nothing else refers to it yet,
        // and `array` holds it alive during the copy.
        unsafe { std::ptr::copy_nonoverlapping(s.as_ptr(), i.data as *mut T, s.len()) };
    }
    Ok(array)
}

/// A 1-D NumPy array with a copy of `s`.
pub(super) fn from_slice<'py, T: Element>(py: Python<'py>, s: &[T]) -> PyResult<Bound<'py, PyAny>> {
    from_vec(py, s.to_vec())
}
