import type { TrayRequest } from './request/send-request.ts';

/** sendRequest bound to one client's connection: what each group of methods is built on. */
export type Send = <T>(request: TrayRequest) => Promise<T>;
