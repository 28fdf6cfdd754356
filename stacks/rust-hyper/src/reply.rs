//! The transport-neutral result of a workload handler, shared by the HTTP server and the script mode.

use std::fmt;

pub const TEXT: &str = "text/plain; charset=utf-8";
pub const JSON: &str = "application/json";
pub const HTML: &str = "text/html; charset=utf-8";

pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn ok(content_type: &'static str, body: impl Into<Vec<u8>>) -> Self {
        Reply {
            status: 200,
            content_type,
            body: body.into(),
        }
    }

    pub fn text(body: impl Into<Vec<u8>>) -> Self {
        Reply::ok(TEXT, body)
    }

    pub fn error(status: u16, message: impl fmt::Display) -> Self {
        Reply {
            status,
            content_type: TEXT,
            body: format!("{message}\n").into_bytes(),
        }
    }
}

/// A data-service failure: `Unavailable` (503) when the service is not configured or cannot be
/// reached, `Failed` (500) when it answered with an error or unexpected data.
#[derive(Debug)]
pub enum ServiceError {
    Unavailable(String),
    Failed(String),
}

impl From<ServiceError> for Reply {
    fn from(err: ServiceError) -> Self {
        match err {
            ServiceError::Unavailable(msg) => Reply::error(503, msg),
            ServiceError::Failed(msg) => Reply::error(500, msg),
        }
    }
}
