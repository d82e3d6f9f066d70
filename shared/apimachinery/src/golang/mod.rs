//! Go's standard library where its text reaches the wire, one module per Go package, so
//! that every crate writes what upstream's Go writes from one place: `strconv.Quote`,
//! `FormatFloat`, `ParseBool`/`ParseInt` and their `NumError` texts ([`strconv`]);
//! `encoding/json`'s escaping, float text, indentation, syntax errors and the type words
//! of its `cannot unmarshal` errors ([`json`]); `encoding/base64` with its
//! `illegal base64 data at input byte N` offsets ([`base64`]); `time.Time` in RFC 3339 and
//! `time.ParseDuration` with its errors ([`time`]); and `fmt`'s `%v`, `%s` and `%T` of a
//! decoded JSON value ([`fmt`]); `net`'s dial and `net/url`'s request errors ([`net`]).
//!
//! These are behaviours, not ports: each function names the Go function whose output it
//! matches, and its tests pin Go's exact output.

pub mod base64;
pub mod fmt;
pub mod json;
pub mod net;
pub mod strconv;
pub mod tabwriter;
pub mod time;
