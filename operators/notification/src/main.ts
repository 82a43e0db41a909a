// `node --import tsx operators/notification/src/main.ts`: the notification operator alone.
import { OptionsError, parseOperatorOptions, runOperators, usage } from '@mooring/runtime';
import { NOTIFICATION_FLAGS, notificationOperator } from './operator.ts';

try {
  const options = parseOperatorOptions(process.argv.slice(2), process.env, {
    extraFlags: NOTIFICATION_FLAGS,
  });
  if (options.help) {
    console.log(
      [
        usage('mooring-notification'),
        '  --receiver-addr <value>              Address of the Receiver webhook server (default :9292)',
        '  --events-listen-addr <value>         Address of the event server (default: the port of --events-addr, else :9090)',
        '  --rate-limit-interval <value>        Duplicate events within this time get 429 (default 5m)',
      ].join('\n'),
    );
    process.exit(0);
  }
  process.exitCode = await runOperators([notificationOperator()], options);
} catch (err) {
  if (err instanceof OptionsError || err instanceof Error)
    console.error(`mooring-notification: ${err.message}`);
  process.exitCode = 2;
}
