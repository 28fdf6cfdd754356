//! HTTP/1.1 server: one tokio accept loop, one task per connection, hyper's http1 connection
//! driver (keep-alive on, pipelined requests answered in order).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE, SERVER};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};

use crate::reply::Reply;
use crate::routes::{handle, State};

fn to_response(reply: Reply) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(reply.body)));
    *response.status_mut() =
        StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    // hyper adds Date (cached once per second) and Content-Length for a Full body itself.
    headers.insert(SERVER, HeaderValue::from_static("hyper"));
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(reply.content_type));
    response
}

async fn serve_request(
    state: Arc<State>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let reply = if request.method() == Method::GET || request.method() == Method::HEAD {
        handle(
            &state,
            request.uri().path(),
            request.uri().query().unwrap_or(""),
        )
        .await
    } else {
        Reply::error(405, "only GET is served")
    };
    Ok(to_response(reply))
}

/// Serves until SIGTERM or SIGINT.
pub async fn run(state: Arc<State>) -> Result<(), String> {
    let addr: SocketAddr = format!("{}:{}", state.config.host, state.config.port)
        .parse()
        .map_err(|e| format!("HOST/PORT do not form a socket address: {e}"))?;
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let mut terminate =
        signal(SignalKind::terminate()).map_err(|e| format!("cannot watch SIGTERM: {e}"))?;
    let mut interrupt =
        signal(SignalKind::interrupt()).map_err(|e| format!("cannot watch SIGINT: {e}"))?;
    eprintln!(
        "rust-hyper listening on {addr} with {} worker threads (db_strategy {:?}, pool_size {})",
        state.config.workers, state.config.db_strategy, state.config.pool_size
    );
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    // e.g. EMFILE under overload: keep serving the connections we have.
                    eprintln!("accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                }
            },
            _ = terminate.recv() => return Ok(()),
            _ = interrupt.recv() => return Ok(()),
        };
        let _ = stream.set_nodelay(true); // responses are small; do not wait for Nagle
        let state = Arc::clone(&state);
        tokio::spawn(async move {
            let service = service_fn(move |request| serve_request(Arc::clone(&state), request));
            // Errors here are client-side (reset, malformed request); the connection just ends.
            let _ = http1::Builder::new()
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
