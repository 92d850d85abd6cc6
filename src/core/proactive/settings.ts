// User settings are the account's (src/core/user-settings.ts, the kernel); proactive code keeps its import path.
export * from '../user-settings';
