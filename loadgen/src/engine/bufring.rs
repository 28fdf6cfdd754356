//! A provided-buffer ring (`IORING_REGISTER_PBUF_RING`): one pool of receive buffers shared by
//! every connection of a thread. The kernel picks a buffer only when bytes arrive, so an idle
//! connection holds none; the worker hands each buffer back once it parsed its bytes.

use io_uring::types::BufRingEntry;
use io_uring::Submitter;
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, Ordering};

/// An anonymous private mapping: page aligned (the ring needs it) and backed by memory only
/// where it was touched, so buffers the kernel never filled cost nothing.
struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

impl Mapping {
    fn new(len: usize) -> io::Result<Mapping> {
        // SAFETY: a fresh anonymous mapping; no existing memory is involved.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = NonNull::new(ptr.cast()).expect("mmap does not return null on success");
        Ok(Mapping { ptr, len })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`, which nothing uses any more.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

pub struct BufRing {
    ring: Mapping,
    buffers: Mapping,
    count: u16,
    size: u32,
    /// Our copy of the ring's tail: where the next returned buffer goes.
    tail: u16,
}

impl BufRing {
    /// Registers `count` (a power of two) buffers of `size` bytes as group `group`.
    pub fn new(
        submitter: &Submitter<'_>,
        count: u16,
        size: u32,
        group: u16,
    ) -> io::Result<BufRing> {
        assert!(count.is_power_of_two(), "a buffer ring has 2^n entries");
        let ring = Mapping::new(usize::from(count) * std::mem::size_of::<BufRingEntry>())?;
        let buffers = Mapping::new(usize::from(count) * size as usize)?;
        // SAFETY: the ring memory is page aligned, zeroed and stays mapped (and registered)
        // until `unregister` and drop.
        unsafe {
            submitter.register_buf_ring_with_flags(ring.ptr.as_ptr() as u64, count, group, 0)?
        };
        let mut pool = BufRing {
            ring,
            buffers,
            count,
            size,
            tail: 0,
        };
        for id in 0..count {
            pool.push(id);
        }
        pool.publish();
        Ok(pool)
    }

    fn entries(&self) -> *mut BufRingEntry {
        self.ring.ptr.as_ptr().cast()
    }

    fn push(&mut self, id: u16) {
        let slot = usize::from(self.tail & (self.count - 1));
        // SAFETY: `slot` < count, inside the ring mapping; the kernel reads entries only up to
        // the published tail, and this one is not published yet.
        let entry = unsafe { &mut *self.entries().add(slot) };
        entry.set_addr(self.buffer(id) as u64);
        entry.set_len(self.size);
        entry.set_bid(id);
        self.tail = self.tail.wrapping_add(1);
    }

    fn publish(&self) {
        // SAFETY: the tail field lives in the first entry of the page-aligned ring; the kernel
        // reads it concurrently, hence the atomic release store.
        unsafe {
            let tail = BufRingEntry::tail(self.entries()) as *const AtomicU16;
            (*tail).store(self.tail, Ordering::Release);
        }
    }

    fn buffer(&self, id: u16) -> *mut u8 {
        // SAFETY: id < count, so the offset stays inside the buffer mapping.
        unsafe {
            self.buffers
                .ptr
                .as_ptr()
                .add(usize::from(id) * self.size as usize)
        }
    }

    /// The `len` bytes the kernel wrote into buffer `id`. The slice's lifetime is not tied to
    /// the ring so the worker can be borrowed mutably while it parses.
    ///
    /// # Safety
    /// The caller owns buffer `id` (it came in a completion and was not given back) and
    /// stops using the slice before `give_back(id)` or dropping the ring.
    pub unsafe fn data<'a>(&self, id: u16, len: usize) -> &'a [u8] {
        assert!(id < self.count && len <= self.size as usize);
        std::slice::from_raw_parts(self.buffer(id), len)
    }

    /// Returns buffer `id` to the kernel.
    pub fn give_back(&mut self, id: u16) {
        self.push(id);
        self.publish();
    }
}
