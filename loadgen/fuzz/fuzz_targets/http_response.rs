//! Fuzz target for the loader's HTTP response parser, driven as the worker's read path drives
//! it on both engines (`http::replay`, through the same `Carry` that keeps a split head). The first byte picks HEAD or not and the piece size; the rest is the
//! byte stream. It must never panic (overflow checks are on), the parser must keep its
//! contract (checked inside `replay`), and the outcome must not depend on how the socket
//! split the stream.

#![no_main]

use libfuzzer_sys::fuzz_target;
use stackbench_load::http::replay;

fuzz_target!(|data: &[u8]| {
    let Some((&control, input)) = data.split_first() else {
        return;
    };
    let head_request = control & 1 == 1;
    let piece = usize::from(control >> 1) + 1; // 1 ..= 128 bytes per read
    let whole = replay([input], head_request).comparable();
    let split = replay(input.chunks(piece), head_request).comparable();
    assert_eq!(whole, split, "piece size {piece}");
});
