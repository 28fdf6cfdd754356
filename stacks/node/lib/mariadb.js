'use strict';

// MariaDB clients of either driver (MYSQL_DRIVER) behind one interface, the one the workloads
// use: mysql2/promise's query(sql, params) resolving to [rows, fields], and end().
//   mysql2  the maintained driver (the default); its own promise API.
//   mysql   node-mysql, the `mysql` package (callbacks), wrapped in promises here: the driver
//           the db-html-report article calls "mysql".
// Both return rows as plain row objects: INT as Number, VARCHAR as String and, with
// dateStrings, DATETIME as "YYYY-MM-DD HH:MM:SS" text, so every workload renders the same bytes.
// Each driver's package is loaded on first use, so a process holds only the one it runs;
// kept here afterwards, so a per-request connection does not resolve the module again.
const loaded = {};
const mysql2 = () => (loaded.mysql2 ??= require('mysql2/promise'));
const mysql = () => (loaded.mysql ??= require('mysql'));

function connectionOptions(db) {
  // A local unix socket is how a same-host production deployment talks to MariaDB.
  const where = db.socket ? { socketPath: db.socket } : { host: db.host, port: db.port };
  return {
    ...where,
    user: db.user,
    password: db.password,
    database: db.database,
    // DATETIME as "YYYY-MM-DD HH:MM:SS" text, exactly what the report renders.
    dateStrings: true,
    // mysql2's default; node-mysql's own default is the 3-byte utf8, which would mangle any
    // 4-byte character a Fortune message could hold.
    charset: 'UTF8MB4_UNICODE_CI',
  };
}

const mysql2Options = (db) => ({
  ...connectionOptions(db),
  // Every query goes through query() (client-side escaping, one round trip), so the
  // prepared-statement cache is never used; its default of 16000 slots is allocated for
  // every new connection, which dominates the cost of a per-request connection.
  maxPreparedStatements: 16,
});

// A node-mysql pool or connection seen through mysql2/promise's interface.
class PromisedMysql {
  constructor(target) {
    this.target = target;
  }

  query(sql, values) {
    return new Promise((resolve, reject) => {
      this.target.query(sql, values, (err, rows, fields) => (err ? reject(err) : resolve([rows, fields])));
    });
  }

  end() {
    return new Promise((resolve, reject) => this.target.end((err) => (err ? reject(err) : resolve())));
  }

  destroy() {
    this.target.destroy();
  }
}

const drivers = {
  mysql2: {
    createPool: (db, size) => mysql2().createPool({ ...mysql2Options(db), connectionLimit: size, maxIdle: size }),
    connect: (db) => mysql2().createConnection(mysql2Options(db)),
  },
  mysql: {
    createPool: (db, size) => new PromisedMysql(mysql().createPool({ ...connectionOptions(db), connectionLimit: size })),
    // Connected before the workload runs, as mysql2's createConnection() is, so a refused
    // connection fails here rather than inside the first query.
    connect: (db) => new Promise((resolve, reject) => {
      const conn = mysql().createConnection(connectionOptions(db));
      conn.connect((err) => (err ? reject(err) : resolve(new PromisedMysql(conn))));
    }),
  },
};

const DRIVERS = Object.keys(drivers);

// The driver named by MYSQL_DRIVER (loadConfig has validated the name).
const mariadbDriver = (name) => drivers[name];

module.exports = { DRIVERS, mariadbDriver };
