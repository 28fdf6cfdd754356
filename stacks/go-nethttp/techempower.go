package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"math/rand/v2"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// The TechEmpower Framework Benchmarks test types, to their published rules.

type world struct {
	ID           int `json:"id"`
	RandomNumber int `json:"randomNumber"`
}

type fortune struct {
	id      int
	message string
}

const worldRows = 10000

func randomWorldID() int { return rand.IntN(worldRows) + 1 }

func jsonReply(v any) (reply, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return reply{}, err
	}
	return reply{contentType: "application/json", body: body}, nil
}

func tfbJSON(_ context.Context, _ *app, _ url.Values) (reply, error) {
	// Serialised per request, as the rules require.
	return jsonReply(struct {
		Message string `json:"message"`
	}{"Hello, World!"})
}

func tfbPlaintext(_ context.Context, _ *app, _ url.Values) (reply, error) {
	return reply{contentType: "text/plain", body: []byte("Hello, World!")}, nil
}

func selectWorld(ctx context.Context, db *sql.DB, id int) (world, error) {
	w := world{}
	err := db.QueryRowContext(ctx, "SELECT id, randomNumber FROM World WHERE id = ?", id).Scan(&w.ID, &w.RandomNumber)
	return w, err
}

func tfbDB(ctx context.Context, a *app, _ url.Values) (reply, error) {
	var w world
	err := a.services.withDB(func(db *sql.DB) error {
		var err error
		w, err = selectWorld(ctx, db, randomWorldID())
		return err
	})
	if err != nil {
		return reply{}, err
	}
	return jsonReply(w)
}

// selectWorlds runs one query per row, as the "queries" test type demands.
func selectWorlds(ctx context.Context, db *sql.DB, count int) ([]world, error) {
	worlds := make([]world, count)
	for i := range worlds {
		w, err := selectWorld(ctx, db, randomWorldID())
		if err != nil {
			return nil, err
		}
		worlds[i] = w
	}
	return worlds, nil
}

func tfbQueries(ctx context.Context, a *app, params url.Values) (reply, error) {
	var worlds []world
	err := a.services.withDB(func(db *sql.DB) error {
		var err error
		worlds, err = selectWorlds(ctx, db, tfbQueryCount(params))
		return err
	})
	if err != nil {
		return reply{}, err
	}
	return jsonReply(worlds)
}

func tfbUpdates(ctx context.Context, a *app, params url.Values) (reply, error) {
	var worlds []world
	err := a.services.withDB(func(db *sql.DB) error {
		var err error
		if worlds, err = selectWorlds(ctx, db, tfbQueryCount(params)); err != nil {
			return err
		}
		// One UPDATE per row (allowed by the rules); each autocommits, so concurrent
		// requests touching the same rows cannot deadlock.
		for i := range worlds {
			worlds[i].RandomNumber = randomWorldID()
			if _, err := db.ExecContext(ctx, "UPDATE World SET randomNumber = ? WHERE id = ?",
				worlds[i].RandomNumber, worlds[i].ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return reply{}, err
	}
	return jsonReply(worlds)
}

func tfbFortunes(ctx context.Context, a *app, _ url.Values) (reply, error) {
	var fortunes []fortune
	err := a.services.withDB(func(db *sql.DB) error {
		var err error
		fortunes, err = selectFortunes(ctx, db)
		return err
	})
	if err != nil {
		return reply{}, err
	}
	fortunes = append(fortunes, fortune{0, "Additional fortune added at request time."})
	sort.Slice(fortunes, func(i, j int) bool { return fortunes[i].message < fortunes[j].message })
	return reply{contentType: "text/html; charset=utf-8", body: []byte(renderFortunes(fortunes))}, nil
}

func selectFortunes(ctx context.Context, db *sql.DB) ([]fortune, error) {
	rows, err := db.QueryContext(ctx, "SELECT id, message FROM Fortune")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var fortunes []fortune
	for rows.Next() {
		var f fortune
		if err := rows.Scan(&f.id, &f.message); err != nil {
			return nil, err
		}
		fortunes = append(fortunes, f)
	}
	return fortunes, rows.Err()
}

// renderFortunes produces the TechEmpower fortunes template with escaped messages.
func renderFortunes(fortunes []fortune) string {
	var page strings.Builder
	page.WriteString("<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>")
	for _, f := range fortunes {
		page.WriteString("<tr><td>" + strconv.Itoa(f.id) + "</td><td>" + htmlEscaper.Replace(f.message) + "</td></tr>")
	}
	page.WriteString("</table></body></html>")
	return page.String()
}
