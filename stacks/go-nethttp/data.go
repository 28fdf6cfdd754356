package main

import (
	"context"
	"database/sql"
	"net/url"
	"strings"

	"github.com/bradfitz/gomemcache/memcache"
	"github.com/redis/go-redis/v9"
)

// htmlEscaper escapes the five characters that are special in HTML text and attributes.
var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")

func dbReport(ctx context.Context, a *app, _ url.Values) (reply, error) {
	var page strings.Builder
	page.WriteString("<!DOCTYPE html><html><head><title>Report</title></head><body>")
	err := a.services.withDB(func(db *sql.DB) error {
		for _, table := range []string{"a", "b"} {
			if err := writeReportTable(ctx, db, table, &page); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return reply{}, err
	}
	page.WriteString("</body></html>")
	return reply{contentType: "text/html; charset=utf-8", body: []byte(page.String())}, nil
}

// writeReportTable renders one table; the table name comes from a fixed list, never from input.
func writeReportTable(ctx context.Context, db *sql.DB, table string, page *strings.Builder) error {
	rows, err := db.QueryContext(ctx, "SELECT id, name, value, created FROM "+table+" ORDER BY id")
	if err != nil {
		return err
	}
	defer rows.Close()
	page.WriteString("<h1>" + table + "</h1><table><tr><th>id</th><th>name</th><th>value</th><th>created</th></tr>")
	for rows.Next() {
		// Without parseTime the driver returns DATETIME as "YYYY-MM-DD HH:MM:SS" text,
		// exactly the format the report wants.
		var id, name, value, created string
		if err := rows.Scan(&id, &name, &value, &created); err != nil {
			return err
		}
		page.WriteString("<tr><td>" + id + "</td><td>" + htmlEscaper.Replace(name) + "</td><td>" +
			value + "</td><td>" + htmlEscaper.Replace(created) + "</td></tr>")
	}
	page.WriteString("</table>")
	return rows.Err()
}

func mysqlRow(ctx context.Context, a *app, _ url.Values) (reply, error) {
	var name string
	err := a.services.withDB(func(db *sql.DB) error {
		return db.QueryRowContext(ctx, "SELECT name FROM test").Scan(&name)
	})
	if err != nil {
		return reply{}, err
	}
	return textReply(name), nil
}

func redisGet(ctx context.Context, a *app, _ url.Values) (reply, error) {
	var value string
	err := a.services.withRedis(func(client *redis.Client) error {
		var err error
		value, err = client.Get(ctx, "test").Result()
		return err
	})
	if err != nil {
		return reply{}, err
	}
	return textReply(value), nil
}

func memcacheGet(_ context.Context, a *app, _ url.Values) (reply, error) {
	var value []byte
	err := a.services.withMemcache(func(client *memcache.Client) error {
		item, err := client.Get("test")
		if err != nil {
			return err
		}
		value = item.Value
		return nil
	})
	if err != nil {
		return reply{}, err
	}
	return reply{contentType: "text/plain; charset=utf-8", body: value}, nil
}
