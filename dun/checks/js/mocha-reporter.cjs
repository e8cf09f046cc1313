'use strict';
// dun's mocha reporter (plugins/javascript.yaml): mocha's own `json` reporter, each test's `fullTitle` written as
// the JSON list of its titles, describe blocks first (`titlePath()`). mocha joins them with spaces, so
// `describe('a b', () => it('c'))` and `describe('a', () => describe('b', () => it('c')))` could not be told
// apart. The mocha loaded is the project's own, the one running this reporter.
const path = require('path');

function projectMocha() {
  for (const from of [process.cwd(), path.dirname(process.argv[1] || '')]) {
    try {
      return require(require.resolve('mocha', { paths: [from] }));
    } catch (e) {
      // try the next place: the mocha binary's own package, for a mocha found outside the project
    }
  }
  return require('mocha');
}

const Json = projectMocha().reporters.JSON;

function titled(runnable) {
  if (runnable && typeof runnable.titlePath === 'function' && !runnable.dunTitled) {
    const titles = runnable.titlePath();
    runnable.fullTitle = () => JSON.stringify(titles);
    runnable.dunTitled = true;
  }
}

class DunJson extends Json {
  constructor(runner, options) {
    // before the json reporter's own listeners: it reads `fullTitle` only at the end of the run
    for (const event of ['test end', 'pass', 'fail', 'pending']) {
      runner.on(event, titled);
    }
    super(runner, options);
  }
}

DunJson.description = "mocha's JSON report, with each test's titles as a JSON list";
module.exports = DunJson;
