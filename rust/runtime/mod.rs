//! The runtime every long computation of the core runs under, independent of the data and the
//! models: cooperative cancellation (`cancel`), panics turned into errors at the library's
//! boundary (`guard`), checks that an allocation fits in memory (`memory`) and the thread
//! pools calls run on (`pool`). Nothing here imports another layer of the crate but `error`.

pub mod cancel;
pub mod guard;
pub mod memory;
pub mod pool;
