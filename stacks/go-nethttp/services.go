package main

import (
	"database/sql"
	"database/sql/driver"
	"net"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
	"github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"
)

// services hands out MariaDB, Redis and memcached clients according to DB_STRATEGY:
// "pool" shares one long-lived pooled client per service (POOL_SIZE connections);
// "per-request" opens a fresh connection for the request and closes it afterwards.
// Nothing connects at startup, so the server runs without any service configured.
type services struct {
	cfg         config
	dbConnector driver.Connector // nil when DB_HOST/DB_SOCKET are unset
	dbPool      *sql.DB
	redisPool   *redis.Client
	mcPool      *memcache.Client
}

func newServices(cfg config) (*services, error) {
	s := &services{cfg: cfg}
	if cfg.dbHost != "" || cfg.dbSocket != "" {
		connector, err := mysql.NewConnector(mysqlConfig(cfg))
		if err != nil {
			return nil, err
		}
		s.dbConnector = connector
	}
	if cfg.dbStrategy != "pool" {
		return s, nil
	}
	if s.dbConnector != nil {
		s.dbPool = sql.OpenDB(s.dbConnector)
		// database/sql keeps only 2 idle connections by default, which would make a loaded
		// server open and close connections constantly; the driver's README recommends
		// MaxIdleConns = MaxOpenConns and a lifetime below the server's wait_timeout.
		s.dbPool.SetMaxOpenConns(cfg.poolSize)
		s.dbPool.SetMaxIdleConns(cfg.poolSize)
		s.dbPool.SetConnMaxLifetime(3 * time.Minute)
	}
	if cfg.redisHost != "" {
		s.redisPool = redis.NewClient(redisOptions(cfg, cfg.poolSize))
	}
	if cfg.memcachedHost != "" {
		s.mcPool = memcache.New(net.JoinHostPort(cfg.memcachedHost, cfg.memcachedPort))
		s.mcPool.MaxIdleConns = cfg.poolSize
	}
	return s, nil
}

func mysqlConfig(cfg config) *mysql.Config {
	m := mysql.NewConfig()
	m.User, m.Passwd, m.DBName = cfg.dbUser, cfg.dbPassword, cfg.dbName
	// A local unix socket is how a same-host production deployment talks to MariaDB.
	if cfg.dbSocket != "" {
		m.Net, m.Addr = "unix", cfg.dbSocket
	} else {
		m.Net, m.Addr = "tcp", net.JoinHostPort(cfg.dbHost, cfg.dbPort)
	}
	// Client-side interpolation sends each query in one round trip instead of
	// prepare + execute + close, which matters most for per-request connections.
	m.InterpolateParams = true
	return m
}

func redisOptions(cfg config, poolSize int) *redis.Options {
	return &redis.Options{
		Addr:     net.JoinHostPort(cfg.redisHost, cfg.redisPort),
		Password: cfg.redisPassword, // AUTH on every new connection; empty: none
		PoolSize: poolSize,
	}
}

// withDB runs fn with a *sql.DB: the shared pool, or a one-connection DB opened for this
// request and closed when fn returns.
func (s *services) withDB(fn func(db *sql.DB) error) error {
	if s.dbConnector == nil {
		return unavailable("MariaDB is not configured: set DB_HOST/DB_PORT or DB_SOCKET")
	}
	if s.dbPool != nil {
		return fn(s.dbPool)
	}
	db := sql.OpenDB(s.dbConnector)
	db.SetMaxOpenConns(1)
	defer db.Close()
	return fn(db)
}

func (s *services) withRedis(fn func(client *redis.Client) error) error {
	if s.cfg.redisHost == "" {
		return unavailable("Redis is not configured: set REDIS_HOST/REDIS_PORT")
	}
	if s.redisPool != nil {
		return fn(s.redisPool)
	}
	client := redis.NewClient(redisOptions(s.cfg, 1))
	defer client.Close()
	return fn(client)
}

func (s *services) withMemcache(fn func(client *memcache.Client) error) error {
	if s.cfg.memcachedHost == "" {
		return unavailable("memcached is not configured: set MEMCACHED_HOST/MEMCACHED_PORT")
	}
	if s.mcPool != nil {
		return fn(s.mcPool)
	}
	client := memcache.New(net.JoinHostPort(s.cfg.memcachedHost, s.cfg.memcachedPort))
	defer client.Close()
	return fn(client)
}

func (s *services) close() {
	if s.dbPool != nil {
		s.dbPool.Close()
	}
	if s.redisPool != nil {
		s.redisPool.Close()
	}
	if s.mcPool != nil {
		s.mcPool.Close()
	}
}
