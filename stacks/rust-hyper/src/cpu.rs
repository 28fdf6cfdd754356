//! Workloads that need no data service. They are plain synchronous functions; the router decides
//! where they run (inline on a runtime worker, or on tokio's blocking pool for file I/O).

use std::collections::HashMap;
use std::fs::File;
use std::hint::black_box;
use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::query::{param_n, parse_bounded};
use crate::reply::{Reply, JSON};

fn bad_n(min: u64, max: u64) -> Reply {
    Reply::error(400, format!("n must be a decimal integer in {min}..{max}"))
}

pub fn hello() -> Reply {
    Reply::text("Hello World")
}

/// GET /data/{n}: `n_text` is the path segment after /data/.
pub fn data(n_text: &str) -> Reply {
    const MAX: u64 = 1_048_576;
    match parse_bounded(n_text, 0, MAX) {
        Some(n) => Reply::text(vec![b'.'; n as usize]),
        None => bad_n(0, MAX),
    }
}

pub fn concat(query: &str) -> Reply {
    let Some(n) = param_n(query, 1000, 0, 10_000_000) else {
        return bad_n(0, 10_000_000);
    };
    let mut s = String::new();
    for _ in 0..n {
        s.push('s');
    }
    Reply::text(s)
}

pub fn add(query: &str) -> Reply {
    let Some(n) = param_n(query, 1000, 0, 100_000_000) else {
        return bad_n(0, 100_000_000);
    };
    let mut counter: u64 = 0;
    for _ in 0..n {
        // black_box keeps one real addition per iteration: without it LLVM folds the loop to `n`.
        counter = black_box(counter + 1);
    }
    Reply::text(counter.to_string())
}

pub fn array(query: &str) -> Reply {
    let Some(n) = param_n(query, 1000, 0, 10_000_000) else {
        return bad_n(0, 10_000_000);
    };
    let mut items: Vec<&str> = Vec::new();
    // The workload is the push loop itself (growth included), so vec!["s"; n] would not be it.
    #[allow(clippy::same_item_push)]
    for _ in 0..n {
        items.push("s");
    }
    Reply::text(black_box(items).len().to_string())
}

pub fn assoc(query: &str) -> Reply {
    let Some(n) = param_n(query, 1000, 0, 10_000_000) else {
        return bad_n(0, 10_000_000);
    };
    let mut map: HashMap<String, &str> = HashMap::new();
    for i in 0..n {
        map.insert(format!("s{i}"), "s");
    }
    Reply::text(black_box(map).len().to_string())
}

/// Opens, reads whole and closes the file with blocking std::fs calls.
fn read_whole(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut file = File::open(path)?;
    let mut content = Vec::new();
    file.read_to_end(&mut content)?;
    Ok(content)
}

fn file_error(path: &Path, err: std::io::Error) -> Reply {
    Reply::error(500, format!("cannot read {}: {err}", path.display()))
}

/// Blocking: run it on tokio's blocking pool (see routes.rs).
pub fn readfile(query: &str, fixtures_dir: &Path) -> Reply {
    let Some(n) = param_n(query, 100, 0, 100_000) else {
        return bad_n(0, 100_000);
    };
    let path = fixtures_dir.join("demo.txt");
    let mut total: u64 = 0;
    for _ in 0..n {
        match read_whole(&path) {
            Ok(content) => total += content.len() as u64,
            Err(err) => return file_error(&path, err),
        }
    }
    Reply::text(total.to_string())
}

/// Blocking: run it on tokio's blocking pool (see routes.rs).
pub fn sha256(query: &str, fixtures_dir: &Path) -> Reply {
    let Some(n) = param_n(query, 1, 1, 100_000) else {
        return bad_n(1, 100_000);
    };
    let path = fixtures_dir.join("random-64k.bin");
    let file = match read_whole(&path) {
        Ok(content) => content,
        Err(err) => return file_error(&path, err),
    };
    let mut digest = Sha256::digest(&file);
    for _ in 1..n {
        let mut hasher = Sha256::new();
        hasher.update(digest); // d(i-1) as its 32 raw bytes
        hasher.update(&file);
        digest = hasher.finalize();
    }
    Reply::text(hex::encode(digest))
}

#[derive(serde::Serialize)]
struct Message {
    message: &'static str,
}

pub fn tfb_json() -> Reply {
    // Serialised per request, as the TechEmpower rules require.
    let body = serde_json::to_vec(&Message {
        message: "Hello, World!",
    })
    .expect("a struct of one string serialises");
    Reply::ok(JSON, body)
}

pub fn tfb_plaintext() -> Reply {
    Reply::ok("text/plain", "Hello, World!")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(reply: Reply) -> String {
        assert_eq!(reply.status, 200);
        String::from_utf8(reply.body).unwrap()
    }

    #[test]
    fn loops_count_exactly() {
        assert_eq!(body(concat("n=3")), "sss");
        assert_eq!(body(add("")), "1000");
        assert_eq!(body(array("n=7")), "7");
        assert_eq!(body(assoc("n=9")), "9");
        assert_eq!(body(data("4")), "....");
        assert_eq!(data("x").status, 400);
        assert_eq!(add("n=100000001").status, 400);
    }
}
