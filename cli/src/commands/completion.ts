import type { Command } from 'commander';
import { CliError } from '../cli-error.ts';

interface Node {
  path: string;
  subcommands: string[];
  options: string[];
}

function walk(cmd: Command, path: string, globals: string[], out: Node[]): void {
  const own = cmd.options.flatMap((o) => [o.short, o.long].filter((f): f is string => !!f));
  const options = [...new Set([...own, ...globals, '--help'])];
  const visible = cmd.commands.filter((c) => c.name() !== 'help');
  out.push({ path, subcommands: visible.flatMap((c) => [c.name(), ...c.aliases()]), options });
  for (const sub of visible) walk(sub, path ? `${path} ${sub.name()}` : sub.name(), options, out);
}

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** A bash completion script generated from the command tree, so it never goes stale. */
export function bashCompletion(program: Command): string {
  const nodes: Node[] = [];
  walk(program, '', [], nodes);
  const subs = nodes.map((n) => `    ${quote(n.path)}) echo ${quote(n.subcommands.join(' '))} ;;`).join('\n');
  const opts = nodes.map((n) => `    ${quote(n.path)}) echo ${quote(n.options.join(' '))} ;;`).join('\n');
  return `# mooring bash completion; load with: source <(mooring completion bash)
_mooring_subcommands() {
  case "$1" in
${subs}
  esac
}
_mooring_options() {
  case "$1" in
${opts}
  esac
}
_mooring() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case " $(_mooring_subcommands "$path") " in
      *" $w "*) path="\${path:+$path }$w" ;;
    esac
  done
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(_mooring_options "$path")" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(_mooring_subcommands "$path")" -- "$cur"))
    [[ \${#COMPREPLY[@]} -eq 0 ]] && COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -F _mooring mooring
`;
}

/** `mooring completion bash|zsh`: prints a completion script for the shell. */
export function registerCompletion(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script (bash or zsh): source <(mooring completion bash)')
    .argument('<shell>', 'bash or zsh')
    .action((shell: string) => {
      if (shell === 'bash') process.stdout.write(bashCompletion(program));
      // zsh runs bash completion functions through bashcompinit.
      else if (shell === 'zsh')
        process.stdout.write(
          `#compdef mooring\nautoload -U +X bashcompinit && bashcompinit\n${bashCompletion(program)}`,
        );
      else throw new CliError(`no completion for shell '${shell}': use bash or zsh.`, 2);
    });
}
