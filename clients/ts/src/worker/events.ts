/** The handler's input event: a step that accepts it runs for the start of the handler. */
export const START = "start";
/** A step that sends it ends the handler; its data is the result. */
export const STOP = "stop";
