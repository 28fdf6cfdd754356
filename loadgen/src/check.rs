//! Streaming response body checks (`--expect-body`, `--expect-length`, `--expect-sha256`):
//! bytes are compared and hashed as they pass, nothing is buffered.

use crate::config::Expect;
use crate::http::BodySink;
use sha2::{Digest, Sha256};
use std::sync::Arc;

pub struct BodyCheck {
    expect: Arc<Expect>,
    /// Whether this response is in the sample whose body is checked.
    sampled: bool,
    seen: u64,
    mismatch: bool,
    hasher: Sha256,
}

impl BodyCheck {
    pub fn new(expect: Arc<Expect>) -> Self {
        Self {
            expect,
            sampled: false,
            seen: 0,
            mismatch: false,
            hasher: Sha256::new(),
        }
    }

    /// Starts a new response; `sampled` selects it for the (possibly costly) content checks.
    pub fn begin(&mut self, sampled: bool) {
        self.sampled = sampled && self.expect.checks_body();
        self.seen = 0;
        self.mismatch = false;
        if self.sampled && self.expect.sha256.is_some() {
            self.hasher.reset();
        }
    }

    /// True if the response body just received passes every check.
    pub fn finish(&mut self) -> bool {
        if !self.sampled {
            return true;
        }
        let expect = &self.expect;
        let body_ok = expect
            .body
            .as_ref()
            .is_none_or(|wanted| !self.mismatch && self.seen == wanted.len() as u64);
        let length_ok = expect.length.is_none_or(|len| self.seen == len);
        let sha_ok = expect
            .sha256
            .is_none_or(|wanted| self.hasher.finalize_reset().as_slice() == wanted);
        body_ok && length_ok && sha_ok
    }
}

impl BodySink for BodyCheck {
    fn body(&mut self, data: &[u8]) {
        if !self.sampled {
            return;
        }
        if let Some(wanted) = &self.expect.body {
            let start = self.seen.min(wanted.len() as u64) as usize;
            let end = start + data.len();
            if end > wanted.len() || wanted[start..end] != *data {
                self.mismatch = true;
            }
        }
        if self.expect.sha256.is_some() {
            self.hasher.update(data);
        }
        self.seen += data.len() as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(expect: Expect, pieces: &[&[u8]]) -> bool {
        let mut c = BodyCheck::new(Arc::new(expect));
        c.begin(true);
        for p in pieces {
            c.body(p);
        }
        c.finish()
    }

    #[test]
    fn body_length_and_hash() {
        let body = |b: &[u8]| Expect {
            body: Some(b.to_vec()),
            ..Expect::default()
        };
        assert!(check(body(b"Hello World"), &[b"Hello", b" World"]));
        assert!(!check(body(b"Hello World"), &[b"Hello"]));
        assert!(!check(body(b"Hello"), &[b"Hello", b"!"]));
        assert!(!check(body(b"Hello"), &[b"Hellp"]));
        let len = Expect {
            length: Some(3),
            ..Expect::default()
        };
        assert!(check(len.clone(), &[b"abc"]));
        assert!(!check(len, &[b"ab"]));
        let sha: [u8; 32] = Sha256::digest(b"abc").into();
        let hash = Expect {
            sha256: Some(sha),
            ..Expect::default()
        };
        assert!(check(hash.clone(), &[b"a", b"bc"]));
        assert!(!check(hash, &[b"abd"]));
    }

    #[test]
    fn unsampled_responses_pass() {
        let mut c = BodyCheck::new(Arc::new(Expect {
            length: Some(1),
            ..Expect::default()
        }));
        c.begin(false);
        c.body(b"too long");
        assert!(c.finish());
    }
}
