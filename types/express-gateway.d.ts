// Minimal typings of the parts of express-gateway 1.16 we use (it ships none).
declare module 'express-gateway/lib/config' {
  const config: {
    gatewayConfig: Record<string, any>;
    systemConfig: Record<string, any>;
    gatewayConfigPath?: string;
    systemConfigPath?: string;
    models: Record<string, unknown>;
  };
  export = config;
}
declare module 'express-gateway/lib/plugins' {
  import type { RequestHandler } from 'express';
  export interface LoadedPlugins {
    policies: { name: string; schema: Record<string, unknown>; policy: (params: any, config: any) => RequestHandler }[];
    conditions: { name: string; schema?: Record<string, unknown>; handler: (...args: any[]) => unknown }[];
    gatewayRoutes: unknown[];
    adminRoutes: unknown[];
    cliExtensions: unknown[];
  }
  export function load(options: { config: unknown }): LoadedPlugins;
}
declare module 'express-gateway/lib/policies' {
  export function register(policy: { name: string; schema: Record<string, unknown>; policy: (...args: any[]) => unknown }): void;
  export function load(names: string[]): void;
  export function resolve(name: string): { name: string; schema?: Record<string, unknown>; policy: (...args: any[]) => unknown };
  export const policies: Record<string, { name: string; schema?: Record<string, unknown> }>;
}
declare module 'express-gateway/lib/conditions' {
  export function init(): { register(condition: { name: string; handler: (...args: any[]) => unknown; schema?: unknown }): void };
  export const conditions: Record<string, unknown>;
}
declare module 'express-gateway/lib/conditions/predefined' {
  const predefined: { name: string }[];
  export = predefined;
}
declare module 'express-gateway/lib/gateway/pipelines' {
  import type { Router } from 'express';
  export function bootstrap(options: { app: Router; config: unknown }): Promise<Router>;
}
declare module 'express-gateway/lib/config/config' {
  /** The class of express-gateway's config singleton: `new Config()` registers the config schemas; `loadConfig` reads `${EG_CONFIG_DIR}/<type>.config.yml`. */
  class Config {
    gatewayConfig: Record<string, any>;
    systemConfig: Record<string, any>;
    gatewayConfigPath?: string;
    systemConfigPath?: string;
    models: Record<string, unknown>;
    loadModels(): void;
    loadConfig(type: 'system' | 'gateway'): void;
  }
  export = Config;
}
declare module 'express-gateway/lib/schemas' {
  export function validate(id: string, data: unknown): { isValid: boolean; error: string };
}
