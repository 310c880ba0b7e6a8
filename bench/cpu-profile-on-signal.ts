/**
 * Preloaded into the gateway by `npm run bench -- --profile S1` (`node --require`): SIGUSR2 starts
 * V8's sampling profiler, the next SIGUSR2 stops it and writes the profile to
 * `$BENCH_PROFILE_FILE` (a `.cpuprofile`, readable by Chrome's DevTools and by
 * `bench/profile-summary`). Marker files `<file>.started` and `<file>.done` tell the bench that the
 * profiler runs and that the profile is complete. A signal rather than `--cpu-prof`: the profile then covers one scenario, not the
 * boot, the set-up requests and the other scenarios.
 */
import fs from 'node:fs';
import { Session } from 'node:inspector';

const file = process.env.BENCH_PROFILE_FILE;
if (file) {
  const session = new Session();
  session.connect();
  let running = false;
  process.on('SIGUSR2', () => {
    if (!running) {
      running = true;
      session.post('Profiler.enable', () => session.post('Profiler.start', () => fs.writeFileSync(`${file}.started`, '')));
      return;
    }
    running = false;
    session.post('Profiler.stop', (err, result) => {
      if (err) {
        process.stderr.write(`cpu profile failed: ${err.message}\n`);
        return;
      }
      fs.writeFileSync(file, JSON.stringify(result.profile));
      fs.writeFileSync(`${file}.done`, '');
    });
  });
}
