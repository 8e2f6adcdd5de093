/*
 * LeakSanitizer's settings for the test runner itself (its suites draw
 * figures through cairo and fontconfig in-process). LeakSanitizer calls
 * these hooks when it is linked in; the rig binary has none: the rig
 * processes the tests start get the same settings from LSAN_OPTIONS
 * (tests/main.c, tests/lsan.supp).
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libfontconfig.so\n";
}

/* ...and quietly: the list of suppressions used would end every run's output. */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
	return "print_suppressions=0";
}
