/** Path of the metrics endpoint on the admin API (a module of its own: the scrape proxy loads no metrics). */
export const METRICS_PATH = '/admin/metrics';
