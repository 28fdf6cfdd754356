'use strict';

const { loadConfig } = require('./config');
const { Services } = require('./services');

// What handlers receive: the configuration and the data-store clients of this process.
function createApp(env, argv) {
  const config = loadConfig(env, argv);
  return { config, services: new Services(config) };
}

module.exports = { createApp };
