import { writeFileSync } from 'node:fs';
import {
  clientIsoDateTimePath,
  clientIsoDateTimeSource,
  clientTypesPath,
  clientTypesSource,
} from './lib/client-types-source.ts';

// Regenerate after changing a tray API schema; test/client/generated-types.test.ts fails on drift.
writeFileSync(clientTypesPath, await clientTypesSource());
console.log(`wrote ${clientTypesPath.pathname}`);
writeFileSync(clientIsoDateTimePath, clientIsoDateTimeSource());
console.log(`wrote ${clientIsoDateTimePath.pathname}`);
