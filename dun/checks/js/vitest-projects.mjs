// dun's vitest reporter (plugins/javascript.yaml), beside vitest's own junit reporter: the JUnit report names each
// test file but not the project (`projects`, `workspace`) it ran in, so a test failing in two projects gave two
// identical items. This writes, next to the JUnit report (`FILE.projects.json`), each test file's project name
// and path in the order of the report's <testsuite> elements: the junit reporter is given the same files in the
// same order. Nothing is imported from vitest: only the reporter interface (onInit, onFinished).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';

export default class DunProjects {
  onInit(ctx) {
    this.ctx = ctx;
    const config = ctx.config || {};
    const output = typeof config.outputFile === 'string' ? config.outputFile : (config.outputFile || {}).junit;
    this.file = output ? `${resolve(config.root || process.cwd(), output)}.projects.json` : null;
    if (this.file) {
      rmSync(this.file, { force: true }); // a stale one of an earlier run must not name this run's projects
    }
  }

  onFinished(files = []) {
    if (!this.file) {
      return;
    }
    const root = (this.ctx.config || {}).root || process.cwd();
    const projects = files.map((file) => ({
      project: typeof file.projectName === 'string' ? file.projectName : '',
      file: file.filepath ? relative(root, file.filepath) : String(file.name || ''),
    }));
    mkdirSync(dirname(this.file), { recursive: true });
    writeFileSync(this.file, JSON.stringify(projects));
  }
}
