'use strict';

// A failure that maps to a specific HTTP status (400 bad input, 503 service not configured).
class WorkloadError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

const badRequest = (message) => new WorkloadError(400, message);
const unavailable = (message) => new WorkloadError(503, message);

module.exports = { WorkloadError, badRequest, unavailable };
