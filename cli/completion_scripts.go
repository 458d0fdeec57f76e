package cli

import (
	"fmt"
	"strings"
)

// The scripts find the command as the first word that is neither a flag
// nor the value of a global flag, complete the flags of that command (or
// the global ones before it), file names after a flag that takes a value,
// and the command's fixed arguments or workflow names otherwise. The
// workflow names come from `wfd workflows --json`, with the client flags of
// the line being completed: protojson puts a Workflow's name (field 1)
// first.

// clientPatterns are case patterns for the client flags forwarded to
// `wfd workflows`: those with a value (the next word), and the rest
// (--tls, --flag=value).
func (s compSpec) clientPatterns() (valued, single []string) {
	for _, f := range s.global {
		if f.name == "version" || f.name == "json" {
			continue
		}
		if f.value {
			valued = append(valued, "--"+f.name, "-"+f.name)
		} else {
			single = append(single, "--"+f.name, "-"+f.name)
		}
		single = append(single, "--"+f.name+"=*", "-"+f.name+"=*")
	}
	return valued, single
}

func (s compSpec) bash() string {
	var b strings.Builder
	valued, single := s.clientPatterns()
	fmt.Fprintf(&b, `# bash completion for wfd, made by 'wfd completion bash'.
# Load it with: source <(wfd completion bash)

# _wfd_words sets words and cword from COMP_WORDS, joining back what bash
# split at : and = (--addr host:7233, --addr=host), as _wfd's locals.
_wfd_words() {
    local i w
    words=() cword=0
    for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
        w="${COMP_WORDS[i]}"
        if ((${#words[@]} > 0)) && [[ $w == [:=] || ${words[-1]} == *[:=] ]]; then
            words[-1]+="$w"
        else
            words+=("$w")
        fi
        ((i == COMP_CWORD)) && cword=$((${#words[@]} - 1))
    done
}

_wfd_workflows() {
    local -a args=()
    local i
    for ((i = 1; i < cword; i++)); do
        case "${words[i]}" in
            %s) args+=("${words[i]}" "${words[i+1]}"); ((i++)) ;;
            %s) args+=("${words[i]}") ;;
        esac
    done
    "${words[0]}" workflows --json "${args[@]}" 2>/dev/null |
        sed -n 's/^{ *"name": *"\([^"]*\)".*/\1/p'
}

_wfd() {
    local -a words
    local cword cur="${COMP_WORDS[COMP_CWORD]}" prev cmd="" i
    _wfd_words
    prev="${words[cword-1]}"
    for ((i = 1; i < cword; i++)); do
        case "${words[i]}" in
            %s) ((i++)) ;;
            -*) ;;
            *) cmd="${words[i]}"; break ;;
        esac
    done
    local flags="" valued="" offer="" workflows=""
    case "$cmd" in
        "") flags=%q; valued=%q; offer=%q ;;
`, strings.Join(valued, "|"), strings.Join(single, "|"), s.valuePattern(),
		flagWords(s.global, false), flagWords(s.global, true), s.commandNames())
	for _, c := range s.commands {
		fmt.Fprintf(&b, "        %s) flags=%q; valued=%q; offer=%q", c.name,
			flagWords(c.flags, false), flagWords(c.flags, true), strings.Join(c.words, " "))
		if c.workflows {
			b.WriteString("; workflows=1")
		}
		b.WriteString(" ;;\n")
	}
	b.WriteString(`    esac
    if [[ -n $prev && " $valued " == *" $prev "* ]]; then
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return
    fi
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$flags" -- "$cur")
        return
    fi
    if [[ -n $workflows ]]; then
        offer="$offer $(_wfd_workflows)"
    fi
    mapfile -t COMPREPLY < <(compgen -W "$offer" -- "$cur")
}

complete -F _wfd wfd
`)
	return b.String()
}

func (s compSpec) zsh() string {
	var b strings.Builder
	valued, single := s.clientPatterns()
	fmt.Fprintf(&b, `#compdef wfd
# zsh completion for wfd, made by 'wfd completion zsh'.
# Load it with: source <(wfd completion zsh) after compinit, or save it as
# _wfd in a directory of $fpath.

_wfd_workflows() {
    local -a args
    local i
    for ((i = 2; i < CURRENT; i++)); do
        case $words[i] in
            (%s) args+=($words[i] $words[i+1]); ((i++)) ;;
            (%s) args+=($words[i]) ;;
        esac
    done
    ${words[1]} workflows --json $args 2>/dev/null |
        sed -n 's/^{ *"name": *"\([^"]*\)".*/\1/p'
}

_wfd() {
    local cmd="" wf="" i
    local -a cmds flags valued args
    cmds=(
`, strings.Join(valued, "|"), strings.Join(single, "|"))
	for _, c := range s.commands {
		fmt.Fprintf(&b, "        %s\n", zshQuote(c.name+":"+c.summary))
	}
	fmt.Fprintf(&b, `    )
    for ((i = 2; i < CURRENT; i++)); do
        case $words[i] in
            (%s) ((i++)) ;;
            (-*) ;;
            (*) cmd=$words[i]; break ;;
        esac
    done
    case $cmd in
        ('') flags=(%s); valued=(%s) ;;
`, s.valuePattern(), flagWords(s.global, false), flagWords(s.global, true))
	for _, c := range s.commands {
		fmt.Fprintf(&b, "        (%s) flags=(%s); valued=(%s); args=(%s)", c.name,
			flagWords(c.flags, false), flagWords(c.flags, true), strings.Join(c.words, " "))
		if c.workflows {
			b.WriteString("; wf=1")
		}
		b.WriteString(" ;;\n")
	}
	b.WriteString(`    esac
    if (( CURRENT > 2 && ${valued[(Ie)$words[CURRENT-1]]} )); then
        _files
    elif [[ $PREFIX == -* ]]; then
        compadd -a flags
    elif [[ -z $cmd || $cmd == help ]]; then
        _describe -t commands 'wfd command' cmds
    elif [[ -n $wf ]]; then
        args+=(${(f)"$(_wfd_workflows)"})
        compadd -a args
    else
        compadd -a args
    fi
}

if [[ $funcstack[1] == _wfd ]]; then
    _wfd "$@"
else
    compdef _wfd wfd
fi
`)
	return b.String()
}

func (s compSpec) fish() string {
	var b strings.Builder
	valued, single := s.clientPatterns()
	fmt.Fprintf(&b, `# fish completion for wfd, made by 'wfd completion fish'.
# Load it with: wfd completion fish | source, or save it as
# ~/.config/fish/completions/wfd.fish

# __wfd_command prints the command of the line being completed.
function __wfd_command
    set -l words (commandline -opc)
    set -e words[1]
    while set -q words[1]
        switch $words[1]
            case %s
                set -e words[1]
            case '-*'
            case '*'
                echo $words[1]
                return 0
        end
        set -e words[1]
    end
    return 1
end

# __wfd_using succeeds when the command is one of its arguments.
function __wfd_using
    set -l cmd (__wfd_command); or return 1
    contains -- $cmd $argv
end

function __wfd_workflows
    set -l words (commandline -opc)
    set -l args
    set -l n (count $words)
    for i in (seq 2 $n)
        switch $words[$i]
            case %s
                if test $i -lt $n
                    set -a args $words[$i] $words[(math $i + 1)]
                end
            case %s
                set -a args $words[$i]
        end
    end
    $words[1] workflows --json $args 2>/dev/null | string replace -rf '^\{ *"name": *"([^"]*)".*' '$1'
end

complete -c wfd -f
`, strings.Join(strings.Split(s.valuePattern(), "|"), " "), strings.Join(valued, " "), fishQuoteAll(single))
	for _, f := range s.global {
		fishFlag(&b, "not __wfd_command", f)
	}
	for _, c := range s.commands {
		fmt.Fprintf(&b, "complete -c wfd -n 'not __wfd_command' -a %s -d %s\n", c.name, fishQuote(c.summary))
	}
	for _, c := range s.commands {
		cond := "__wfd_using " + c.name
		for _, f := range c.flags {
			fishFlag(&b, cond, f)
		}
		if len(c.words) > 0 {
			fmt.Fprintf(&b, "complete -c wfd -n %s -a %s\n", fishQuote(cond), fishQuote(strings.Join(c.words, " ")))
		}
		if c.workflows {
			fmt.Fprintf(&b, "complete -c wfd -n %s -a '(__wfd_workflows)'\n", fishQuote(cond))
		}
	}
	return b.String()
}

func fishFlag(b *strings.Builder, cond string, f compFlag) {
	fmt.Fprintf(b, "complete -c wfd -n %s -l %s", fishQuote(cond), f.name)
	if f.value {
		b.WriteString(" -r -F")
	}
	fmt.Fprintf(b, " -d %s\n", fishQuote(f.usage))
}

// zshQuote single-quotes s for zsh (and bash).
func zshQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fishQuote single-quotes s for fish, where \ and ' are escaped inside.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func fishQuoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fishQuote(s)
	}
	return strings.Join(q, " ")
}
