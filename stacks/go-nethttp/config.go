package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
)

// config is everything the orchestrator passes in the environment (contracts sections 3, 4),
// read once at startup.
type config struct {
	host, port  string
	workers     int
	fixturesDir string
	dbStrategy  string // "pool" or "per-request"
	poolSize    int

	dbHost, dbPort, dbSocket, dbUser, dbPassword, dbName string
	redisHost, redisPort, redisPassword                  string
	memcachedHost, memcachedPort                         string
}

func loadConfig() (config, error) {
	c := config{
		host:          envOr("HOST", "127.0.0.1"),
		port:          os.Getenv("PORT"),
		fixturesDir:   os.Getenv("FIXTURES_DIR"),
		dbStrategy:    envOr("DB_STRATEGY", "pool"),
		dbHost:        os.Getenv("DB_HOST"),
		dbPort:        envOr("DB_PORT", "3306"),
		dbSocket:      os.Getenv("DB_SOCKET"),
		dbUser:        os.Getenv("DB_USER"),
		dbPassword:    os.Getenv("DB_PASSWORD"),
		dbName:        envOr("DB_NAME", "stackbench"),
		redisHost:     os.Getenv("REDIS_HOST"),
		redisPort:     envOr("REDIS_PORT", "6379"),
		redisPassword: os.Getenv("REDIS_PASSWORD"),
		memcachedHost: os.Getenv("MEMCACHED_HOST"),
		memcachedPort: envOr("MEMCACHED_PORT", "11211"),
	}
	var err error
	if c.workers, err = positiveIntEnv("WORKERS", 0); err != nil {
		return c, err
	}
	if c.poolSize, err = positiveIntEnv("POOL_SIZE", 10); err != nil {
		return c, err
	}
	if c.dbStrategy != "pool" && c.dbStrategy != "per-request" {
		return c, fmt.Errorf("DB_STRATEGY must be \"pool\" or \"per-request\", got %q", c.dbStrategy)
	}
	if c.fixturesDir == "" {
		return c, fmt.Errorf("FIXTURES_DIR is not set (it must hold demo.txt and random-64k.bin)")
	}
	return c, nil
}

func (c config) listenAddr() string { return net.JoinHostPort(c.host, c.port) }

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// positiveIntEnv returns fallback when the variable is unset and rejects anything but n >= 1.
func positiveIntEnv(name string, fallback int) (int, error) {
	raw := os.Getenv(name)
	if raw == "" {
		return fallback, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s must be a positive integer, got %q", name, raw)
	}
	return n, nil
}
