// Loaded before every test file (bunfig.toml): hooks for the whole run.
import { afterAll, afterEach, beforeEach } from "bun:test";
import { fileEnded, testEnded, testStarted } from "./helpers/pg";
import { removeTempDirs } from "./helpers/server";

beforeEach(() => testStarted());
afterEach(() => testEnded());
afterAll(async () => {
  await fileEnded();
  removeTempDirs();
});
