#!/usr/bin/env node
// The checkout's compiled CLI (npm links this file as node_modules/.bin/climate-pulse; Node
// resolves the link, so the path is relative to packages/cli/bin/ in the checkout).
import '../../../dist/cli/index.js';
