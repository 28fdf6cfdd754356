//! Workloads that talk to MariaDB, Redis or memcached (all through async clients, so they never
//! block a runtime worker).

use mysql_async::prelude::Queryable;
use serde::Serialize;

use crate::query::tfb_query_count;
use crate::reply::{Reply, ServiceError, HTML, JSON};
use crate::services::{mysql_query, MysqlConn, Services};

type Outcome = Result<Reply, ServiceError>;

fn escape_html(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
}

async fn report_table(
    html: &mut String,
    conn: &mut MysqlConn,
    table: &str,
) -> Result<(), ServiceError> {
    // Text protocol: DATETIME arrives already rendered as YYYY-MM-DD HH:MM:SS.
    let sql = format!("SELECT id, name, value, created FROM {table} ORDER BY id");
    let rows: Vec<(i64, String, i64, String)> = mysql_query(conn, &sql).await?;
    html.push_str(&format!(
        "<h1>{table}</h1><table><tr><th>id</th><th>name</th><th>value</th><th>created</th></tr>\n"
    ));
    for (id, name, value, created) in rows {
        html.push_str(&format!("<tr><td>{id}</td><td>"));
        escape_html(html, &name);
        html.push_str(&format!("</td><td>{value}</td><td>"));
        escape_html(html, &created);
        html.push_str("</td></tr>\n");
    }
    html.push_str("</table>");
    Ok(())
}

pub async fn db_report(services: &Services) -> Outcome {
    let mut html = String::from("<!DOCTYPE html><html><head><title>Report</title></head><body>\n");
    services
        .mysql
        .with_conn(async |conn: &mut MysqlConn| {
            report_table(&mut html, conn, "a").await?;
            report_table(&mut html, conn, "b").await
        })
        .await?;
    html.push_str("</body></html>");
    Ok(Reply::ok(HTML, html))
}

pub async fn mysql_row(services: &Services) -> Outcome {
    let names: Vec<String> = services
        .mysql
        .with_conn(async |conn: &mut MysqlConn| mysql_query(conn, "SELECT name FROM test").await)
        .await?;
    let name = names
        .into_iter()
        .next()
        .ok_or_else(|| ServiceError::Failed("table test is empty".into()))?;
    Ok(Reply::text(name))
}

pub async fn redis_get(services: &Services) -> Outcome {
    Ok(Reply::text(services.redis.get("test").await?))
}

pub async fn memcache_get(services: &Services) -> Outcome {
    Ok(Reply::text(services.memcached.get("test").await?))
}

#[derive(Serialize)]
struct World {
    id: i32,
    #[serde(rename = "randomNumber")]
    random_number: i32,
}

fn random_id() -> i32 {
    fastrand::i32(1..=10_000)
}

async fn select_world(conn: &mut MysqlConn, id: i32) -> Result<World, ServiceError> {
    // A prepared statement; in pool mode mysql_async caches it per connection.
    let row: Option<(i32, i32)> = conn
        .exec_first("SELECT id, randomNumber FROM World WHERE id = ?", (id,))
        .await
        .map_err(|e| ServiceError::Failed(format!("MariaDB SELECT World {id} failed: {e}")))?;
    let (id, random_number) =
        row.ok_or_else(|| ServiceError::Failed(format!("World row {id} does not exist")))?;
    Ok(World { id, random_number })
}

fn json<T: Serialize>(value: &T) -> Outcome {
    serde_json::to_vec(value)
        .map(|body| Reply::ok(JSON, body))
        .map_err(|e| ServiceError::Failed(e.to_string()))
}

pub async fn tfb_db(services: &Services) -> Outcome {
    let world = services
        .mysql
        .with_conn(async |conn: &mut MysqlConn| select_world(conn, random_id()).await)
        .await?;
    json(&world)
}

pub async fn tfb_queries(services: &Services, query: &str) -> Outcome {
    let count = tfb_query_count(query);
    let worlds = services
        .mysql
        .with_conn(async |conn: &mut MysqlConn| {
            let mut worlds = Vec::with_capacity(count);
            for _ in 0..count {
                worlds.push(select_world(conn, random_id()).await?);
            }
            Ok(worlds)
        })
        .await?;
    json(&worlds)
}

pub async fn tfb_fortunes(services: &Services) -> Outcome {
    let mut fortunes: Vec<(i32, String)> = services
        .mysql
        .with_conn(async |conn: &mut MysqlConn| {
            mysql_query(conn, "SELECT id, message FROM Fortune").await
        })
        .await?;
    fortunes.push((0, "Additional fortune added at request time.".into()));
    fortunes.sort_by(|a, b| a.1.cmp(&b.1));
    let mut html = String::from(
        "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>",
    );
    for (id, message) in &fortunes {
        html.push_str(&format!("<tr><td>{id}</td><td>"));
        escape_html(&mut html, message);
        html.push_str("</td></tr>");
    }
    html.push_str("</table></body></html>");
    Ok(Reply::ok(HTML, html))
}

pub async fn tfb_updates(services: &Services, query: &str) -> Outcome {
    let count = tfb_query_count(query);
    let worlds = services
        .mysql
        .with_conn(async |conn: &mut MysqlConn| {
            let mut worlds = Vec::with_capacity(count);
            for _ in 0..count {
                worlds.push(select_world(conn, random_id()).await?);
            }
            for world in &mut worlds {
                world.random_number = random_id();
                // One UPDATE per row, as the TechEmpower rules allow; autocommit writes each through.
                conn.exec_drop(
                    "UPDATE World SET randomNumber = ? WHERE id = ?",
                    (world.random_number, world.id),
                )
                .await
                .map_err(|e| {
                    ServiceError::Failed(format!("MariaDB UPDATE World {} failed: {e}", world.id))
                })?;
            }
            Ok(worlds)
        })
        .await?;
    json(&worlds)
}
