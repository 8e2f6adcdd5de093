# bash completion for rig                                    -*- shell-script -*-
#
# Installed as share/bash-completion/completions/rig (make install; the .deb
# and the Homebrew formula), or sourced by hand: source completions/rig.bash
#
# The commands, module names and help topics come from rig itself (`rig help`,
# `rig help modules`, `rig help help`), so they cannot go stale. Each command's
# options are listed below; tests/completion_test.c checks them against the
# options `rig help COMMAND` prints, both ways. Plans complete to *.yaml and
# *.yml files, runs (report, resume, compare, push) to folders holding a results.db.
# Needs nothing from the bash-completion package.

# The options of rig COMMAND, and those among them that take an argument.
_rig_options()
{
	case $1 in
	run) echo "-o --output --runs --seed --platform --fs-map --var -y --yes --force" \
		"--allow --image-size -q --quiet --json-progress --no-fit-check" ;;
	resume) echo "-y --yes --force --allow -q --quiet --json-progress --no-fit-check" ;;
	plan) echo "--seed --platform --fs-map --var --image-size --assume-rate --assume-ops --assume-walk --from --full" ;;
	validate) echo "--platform --fs-map --var --image-size" ;;
	compare) echo "-o --output --within --against --db" ;;
	report) echo "--db -o --output" ;;
	push) echo "--host" ;;
	devices) echo "--platform" ;;
	esac
}

_rig_takes_argument()
{
	case $1 in
	-o | --output | --runs | --seed | --platform | --fs-map | --var | --allow | \
		--image-size | --assume-rate | --assume-ops | --assume-walk | --from | --against | --db | --host) return 0 ;;
	esac
	return 1
}

# Lines of `rig help ...`: the first words of the indented lines of the block
# that starts with a line matching $2 ("commands", "modules"), up to a blank
# line.
_rig_help_words()
{
	local rig=$1 start=$2 line in=
	shift 2
	while IFS= read -r line; do
		if [[ -z $in ]]; then
			[[ $line == $start* ]] && in=1
			continue
		fi
		[[ $line == "  "[a-z]* ]] || break
		line=${line#  }
		printf '%s\n' "${line%% *}"
	done < <("$rig" help "$@" 2>/dev/null)
}

# Help topics: the list on the line "Topics: a, b, c." of `rig help help`.
_rig_help_topics()
{
	local line
	line=$("$1" help help 2>/dev/null)
	line=${line#*Topics: }
	line=${line%%.*}
	printf '%s\n' ${line//,/ }
}

_rig_add()
{
	local w
	while IFS= read -r w; do
		[[ -n $w ]] && COMPREPLY+=("$w")
	done
}

# Folders holding a run (a results.db), and folders holding runs (runs/).
_rig_runs()
{
	local d cur=$1
	compopt -o filenames 2>/dev/null
	while IFS= read -r d; do
		if [[ -e $d/results.db ]] || compgen -G "$d/*/results.db" >/dev/null; then
			COMPREPLY+=("$d")
		fi
	done < <(compgen -d -- "$cur")
}

_rig_plans()
{
	compopt -o filenames 2>/dev/null
	_rig_add < <(compgen -d -- "$1"; compgen -f -X '!*.yaml' -- "$1"; compgen -f -X '!*.yml' -- "$1")
}

_rig()
{
	local rig=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} prev= cmd=
	COMPREPLY=()
	# The command is the word after rig (rig has no options of its own but
	# --version).
	if ((COMP_CWORD > 1)); then
		cmd=${COMP_WORDS[1]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
	fi
	if ((COMP_CWORD == 1)); then
		if [[ $cur == -* ]]; then
			_rig_add < <(compgen -W "--version" -- "$cur")
		else
			_rig_add < <(compgen -W "$(_rig_help_words "$rig" commands)" -- "$cur")
		fi
		return 0
	fi
	# --option=value: bash splits it at = (COMP_WORDBREAKS) into three words.
	if [[ $cur == = ]] && [[ $prev == -* ]]; then
		cur=
	elif [[ $prev == = ]] && ((COMP_CWORD > 2)); then
		prev=${COMP_WORDS[COMP_CWORD - 2]}
	fi
	# An option's argument.
	if [[ $prev == -* ]] && _rig_takes_argument "$prev"; then
		case $prev in
		-o | --output | --runs)
			compopt -o filenames 2>/dev/null
			_rig_add < <(compgen -d -- "$cur")
			;;
		--platform) _rig_add < <(compgen -W "linux macos" -- "$cur") ;;
		--from) _rig_runs "$cur" ;;
		--allow)
			# Comma-separated: complete the last rule.
			local done_=${cur%"${cur##*,}"}
			_rig_add < <(compgen -P "$done_" -W "loop virtual internal" -- "${cur##*,}")
			;;
		esac
		return 0
	fi
	if [[ $cur == -* ]]; then
		_rig_add < <(compgen -W "$(_rig_options "$cmd")" -- "$cur")
		return 0
	fi
	case $cmd in
	run | plan | validate) _rig_plans "$cur" ;;
	report | resume | compare | push) _rig_runs "$cur" ;;
	help)
		# One word: a command, a module or a topic ("plan" is two of them).
		((COMP_CWORD == 2)) || return 0
		_rig_add < <(compgen -W "$(_rig_help_words "$rig" commands) \
			$(_rig_help_words "$rig" modules modules) $(_rig_help_topics "$rig")" \
			-- "$cur" | sort -u)
		;;
	esac
	return 0
}

complete -F _rig rig
