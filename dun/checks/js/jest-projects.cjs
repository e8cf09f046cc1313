'use strict';
// dun's jest results processor (plugins/javascript.yaml, `--testResultsProcessor`): jest's `--json` report names
// each test file but not the project (`projects`) it ran in, so a test failing in two projects gave two identical
// items. This adds `dunProjects`, the display name of each test file's project (null without one), in the order
// of `testResults`: jest's JSON keeps the processor's top-level keys and the results' order.
// A project without one is named by dun's reporter (jest-reporter.cjs): its rootDir, config file or place in the list.
const MARK = Symbol.for('dun.jest.project');

module.exports = (results) => {
  results.dunProjects = (results.testResults || []).map((result) => {
    const name = result && result.displayName;
    if (typeof name === 'string' && name) {
      return name;
    }
    if (name && typeof name.name === 'string' && name.name) {
      return name.name;
    }
    return result && typeof result[MARK] === 'string' ? result[MARK] : null;
  });
  return results;
};
