'use strict';
// dun's jest reporter (plugins/javascript.yaml, beside jest's default one): a project (`projects`) without a
// `displayName` shows nowhere in jest's JSON, so the same test failing in two such projects gave two identical items.
// This marks each test file's result with what tells its project from the others, for dun's results processor
// (jest-projects.cjs), which runs after it on the same result objects: the project's rootDir relative to the
// repository when no other project shares it; else its own config file (`jest.unit.config.js`) or, for a
// config written inline, its place in the list (`projects[1]`). jest names each project by a hash of those three
// (its rootDir, config path and index), which is how they are found here. Nothing is imported from jest.
const { createHash } = require('node:crypto');
const { existsSync, readdirSync } = require('node:fs');
const path = require('node:path');

const MARK = Symbol.for('dun.jest.project');
const CONFIG_FILE = /^(package\.json|.*jest.*\.(json|[cm]?[jt]s))$/i;

function jestId(rootDir, configPath, index) {
  return createHash('sha1').update(rootDir).update(configPath).update(String(index)).digest('hex').slice(0, 32);
}

function sharedRootLabel(config, count, cwd) {
  let files = [];
  try {
    files = readdirSync(config.rootDir).filter((name) => CONFIG_FILE.test(name)).slice(0, 50);
  } catch {
    // an unreadable rootDir: the id is all there is
  }
  for (let index = 0; index < Math.max(count, 1) + 50; index += 1) {
    if (jestId(config.rootDir, '', index) === config.id) {
      return `projects[${index}]`;
    }
    for (const name of files) {
      const file = path.join(config.rootDir, name);
      if (jestId(config.rootDir, file, index) === config.id) {
        return path.relative(cwd, file);
      }
    }
  }
  return `${path.relative(cwd, config.rootDir) || '.'} (${config.id})`;
}

// the repository holding the working directory (a workspace package's jest runs in the package): names are from it
function repositoryRoot(cwd) {
  for (let dir = cwd; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, '.git'))) {
      return dir;
    }
    if (path.dirname(dir) === dir) {
      return cwd;
    }
  }
}

class DunJestProjects {
  constructor() {
    this.results = [];
  }

  onTestFileResult(test, result) {
    const config = test && test.context && test.context.config;
    if (result && config) {
      this.results.push([result, config]);
    }
  }

  onRunComplete(contexts) {
    const configs = [...(contexts || [])].map((context) => context.config).filter(Boolean);
    if (configs.length < 2) {
      return; // one project: nothing to tell apart
    }
    const cwd = repositoryRoot(process.cwd());
    const labels = new Map();
    for (const config of configs) {
      const shared = configs.filter((other) => other.rootDir === config.rootDir).length > 1;
      labels.set(config.id, shared ? sharedRootLabel(config, configs.length, cwd)
        : path.relative(cwd, config.rootDir) || '.');
    }
    for (const [result, config] of this.results) {
      Object.defineProperty(result, MARK, { value: labels.get(config.id), enumerable: false });
    }
  }
}

module.exports = DunJestProjects;
