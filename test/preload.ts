// Loaded before every test file (bunfig.toml): hooks for the whole run.
import { afterAll, afterEach, beforeEach } from "bun:test";
import { removeTempDirs } from "./helpers/server";
import { fileEnded, testEnded, testStarted } from "./helpers/test-store";

beforeEach(() => testStarted());
afterEach(() => testEnded());
afterAll(() => {
  fileEnded();
  removeTempDirs();
});
