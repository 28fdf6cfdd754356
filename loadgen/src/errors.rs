//! Error classes: every failed request attempt is counted in exactly one class, never raised.

use std::io;

/// Why a request attempt failed. The order is the order of the JSON `errors` object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    Connect,
    Refused,
    Reset,
    Read,
    Write,
    Timeout,
    Status,
    BodyMismatch,
    AddressExhausted,
    TooManyFiles,
    Protocol,
}

impl ErrorClass {
    pub const ALL: [ErrorClass; 11] = [
        ErrorClass::Connect,
        ErrorClass::Refused,
        ErrorClass::Reset,
        ErrorClass::Read,
        ErrorClass::Write,
        ErrorClass::Timeout,
        ErrorClass::Status,
        ErrorClass::BodyMismatch,
        ErrorClass::AddressExhausted,
        ErrorClass::TooManyFiles,
        ErrorClass::Protocol,
    ];

    /// Key in the JSON `errors` object (docs/contracts.md section 6).
    pub fn key(self) -> &'static str {
        match self {
            ErrorClass::Connect => "connect",
            ErrorClass::Refused => "refused",
            ErrorClass::Reset => "reset",
            ErrorClass::Read => "read",
            ErrorClass::Write => "write",
            ErrorClass::Timeout => "timeout",
            ErrorClass::Status => "status",
            ErrorClass::BodyMismatch => "body_mismatch",
            ErrorClass::AddressExhausted => "address_exhausted",
            ErrorClass::TooManyFiles => "too_many_files",
            ErrorClass::Protocol => "protocol",
        }
    }

    /// Whether the response arrived in full (status and body checks fail *completed* requests).
    pub fn is_completed_response(self) -> bool {
        matches!(self, ErrorClass::Status | ErrorClass::BodyMismatch)
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Classes shared by every socket call: resource exhaustion is reported as such wherever it shows.
fn classify_common(err: &io::Error) -> Option<ErrorClass> {
    match err.raw_os_error() {
        Some(libc::EADDRNOTAVAIL) => Some(ErrorClass::AddressExhausted),
        Some(libc::EMFILE) | Some(libc::ENFILE) => Some(ErrorClass::TooManyFiles),
        Some(libc::ECONNRESET) | Some(libc::EPIPE) | Some(libc::ECONNABORTED) => {
            Some(ErrorClass::Reset)
        }
        _ => None,
    }
}

/// Class of a failure to create or connect a socket.
pub fn classify_connect(err: &io::Error) -> ErrorClass {
    if err.raw_os_error() == Some(libc::ECONNREFUSED) {
        return ErrorClass::Refused;
    }
    if err.raw_os_error() == Some(libc::ETIMEDOUT) {
        return ErrorClass::Timeout;
    }
    classify_common(err).unwrap_or(ErrorClass::Connect)
}

/// Class of a failed read on an established connection.
pub fn classify_read(err: &io::Error) -> ErrorClass {
    classify_common(err).unwrap_or(ErrorClass::Read)
}

/// Class of a failed write on an established connection.
pub fn classify_write(err: &io::Error) -> ErrorClass {
    classify_common(err).unwrap_or(ErrorClass::Write)
}

/// Count per error class.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorCounts([u64; 11]);

impl ErrorCounts {
    pub fn add(&mut self, class: ErrorClass, n: u64) {
        self.0[class.index()] += n;
    }

    pub fn get(&self, class: ErrorClass) -> u64 {
        self.0[class.index()]
    }

    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    pub fn merge(&mut self, other: &ErrorCounts) {
        for (mine, theirs) in self.0.iter_mut().zip(other.0.iter()) {
            *mine += theirs;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_errors_map_to_their_classes() {
        let e = |code| io::Error::from_raw_os_error(code);
        assert_eq!(
            classify_connect(&e(libc::ECONNREFUSED)),
            ErrorClass::Refused
        );
        assert_eq!(
            classify_connect(&e(libc::EADDRNOTAVAIL)),
            ErrorClass::AddressExhausted
        );
        assert_eq!(classify_connect(&e(libc::EMFILE)), ErrorClass::TooManyFiles);
        assert_eq!(
            classify_connect(&e(libc::EHOSTUNREACH)),
            ErrorClass::Connect
        );
        assert_eq!(classify_read(&e(libc::ECONNRESET)), ErrorClass::Reset);
        assert_eq!(classify_read(&e(libc::EIO)), ErrorClass::Read);
        assert_eq!(classify_write(&e(libc::EPIPE)), ErrorClass::Reset);
        assert_eq!(classify_write(&e(libc::EIO)), ErrorClass::Write);
    }

    #[test]
    fn counts_add_and_merge() {
        let mut a = ErrorCounts::default();
        a.add(ErrorClass::Timeout, 2);
        let mut b = ErrorCounts::default();
        b.add(ErrorClass::Timeout, 1);
        b.add(ErrorClass::Protocol, 4);
        a.merge(&b);
        assert_eq!(a.get(ErrorClass::Timeout), 3);
        assert_eq!(a.get(ErrorClass::Protocol), 4);
        assert_eq!(a.total(), 7);
    }
}
